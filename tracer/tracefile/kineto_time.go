package tracefile

import "errors"

// Errors of parseMicrosNs.
var (
	kErrNumSyntax   = errors.New("not a decimal number")
	kErrNumOverflow = errors.New("out of range for int64 nanoseconds (about ±292 years)")
)

// parseMicrosNs converts the decimal text of a number of microseconds
// (a JSON number or the content of a JSON string: "-"? digits ("." digits)?
// ([eE] [+-]? digits)?) into int64 nanoseconds, exactly: the digits are
// scaled by 1000 as a decimal, never through float64, so
// "1712195495519689.047" gives 1712195495519689047.
//
// Digits beyond nanoseconds (more than three fraction digits after applying
// the exponent) are rounded half to even on the exact decimal value, as
// Python's decimal.ROUND_HALF_EVEN does; "0.0005" gives 0, "0.0015" gives 2.
// Values outside int64 return kErrNumOverflow; malformed text kErrNumSyntax.
func parseMicrosNs(b []byte) (int64, error) {
	if v, ok := microsFast(b); ok {
		return v, nil
	}
	i := 0
	neg := false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	intDigits := b[intStart:i]
	if len(intDigits) == 0 {
		return 0, kErrNumSyntax
	}
	var fracDigits []byte
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		fracDigits = b[fs:i]
		if len(fracDigits) == 0 {
			return 0, kErrNumSyntax
		}
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		es := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if exp < 100000 {
				exp = exp*10 + int(b[i]-'0')
			}
			i++
		}
		if i == es {
			return 0, kErrNumSyntax
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(b) {
		return 0, kErrNumSyntax
	}
	// The digit string D = intDigits ‖ fracDigits; the ns value is D with
	// the decimal point after p digits.
	nd := len(intDigits) + len(fracDigits)
	digit := func(k int) byte {
		if k < len(intDigits) {
			return intDigits[k] - '0'
		}
		return fracDigits[k-len(intDigits)] - '0'
	}
	p := len(intDigits) + exp + 3
	const maxU = uint64(1) << 63 // magnitude limit (MinInt64 allowed when neg)
	var acc uint64
	for k := 0; k < p; k++ {
		var d byte
		if k < nd {
			d = digit(k)
		}
		if acc == 0 && d == 0 {
			if k >= nd {
				break // value is zero; more zeros change nothing
			}
			continue
		}
		if acc > (maxU-uint64(d))/10 {
			return 0, kErrNumOverflow
		}
		acc = acc*10 + uint64(d)
	}
	// Round half to even on the digits after the point.
	if p < nd {
		var r byte
		sticky := false
		start := p
		if p < 0 {
			start = 0
			// r = 0 (an implicit leading zero), everything is sticky.
			for k := 0; k < nd; k++ {
				if digit(k) != 0 {
					sticky = true
					break
				}
			}
		} else {
			r = digit(p)
			for k := start + 1; k < nd; k++ {
				if digit(k) != 0 {
					sticky = true
					break
				}
			}
		}
		if r > 5 || (r == 5 && (sticky || acc&1 == 1)) {
			acc++
		}
	}
	if acc > maxU || (!neg && acc == maxU) {
		return 0, kErrNumOverflow
	}
	if neg {
		return -int64(acc), nil
	}
	return int64(acc), nil
}

// kParseInt parses an optionally negative decimal integer; ok is false for
// anything else (fractions, exponents, overflow of int64).
func kParseInt(b []byte) (int64, bool) {
	neg := false
	i := 0
	if len(b) > 0 && b[0] == '-' {
		neg = true
		i = 1
	}
	if i == len(b) || len(b)-i > 19 {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > 1<<63-1 {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// kParseUint parses a decimal unsigned integer (correlation ids).
func kParseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

var kPow10 = [...]int64{1, 10, 100, 1000}

// microsFast handles the common shapes ("-"? up to 16 digits, then "." and
// 1–3 digits, or nothing) without rounding; ok is false for anything else,
// which parseMicrosNs then handles in full.
func microsFast(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > 21 {
		return 0, false
	}
	i := 0
	neg := b[0] == '-'
	if neg {
		i = 1
	}
	start := i
	var v int64
	for i < n && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	if i == start || i-start > 16 || v > 9223372036854774 {
		return 0, false
	}
	v *= 1000
	if i < n {
		if b[i] != '.' {
			return 0, false
		}
		i++
		fs := i
		var f int64
		for i < n && b[i] >= '0' && b[i] <= '9' {
			f = f*10 + int64(b[i]-'0')
			i++
		}
		nf := i - fs
		if i != n || nf < 1 || nf > 3 {
			return 0, false
		}
		v += f * kPow10[3-nf]
	}
	if neg {
		v = -v
	}
	return v, true
}
