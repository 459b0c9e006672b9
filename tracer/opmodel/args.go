package opmodel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// Input is one argument of a recorded operator call.
type Input struct {
	// Tensor: the argument is a tensor (its type a dtype) with Dims; a
	// 0-dimensional tensor has empty Dims and one element.
	Tensor bool
	Dims   []int64
	// List holds a TensorList argument's tensors' dims.
	List [][]int64
	// Type is the "Input type" as recorded: "float", "c10::BFloat16",
	// "long int", "Scalar", "TensorList", "" (None).
	Type string
	// Concrete is the "Concrete Inputs" text of a non-tensor argument
	// ("1", "[-1]", "True"); "" when none was recorded.
	Concrete string
}

// ParseArgs parses a call's shape args (tracer.OpCall.Args: the four
// record_shapes JSON values, each ended by tracer.ArgSep). Missing values
// leave their fields empty; malformed ones are an error naming the value.
func ParseArgs(args string) ([]Input, error) {
	parts := strings.Split(args, string(tracer.ArgSep))
	get := func(i int) string {
		if i < len(parts) {
			return parts[i]
		}
		return ""
	}
	var dims []jval
	var types, concrete []string
	if s := get(0); s != "" {
		v, err := parseJSON(s)
		if err != nil || v.list == nil && !v.isList {
			return nil, fmt.Errorf("\"Input Dims\" %s: not a JSON array (%v)", clip(s), err)
		}
		dims = v.list
	}
	strs := func(name, s string) ([]string, error) {
		if s == "" {
			return nil, nil
		}
		v, err := parseJSON(s)
		if err != nil || !v.isList {
			return nil, fmt.Errorf("\"%s\" %s: not a JSON array (%v)", name, clip(s), err)
		}
		out := make([]string, len(v.list))
		for i, x := range v.list {
			out[i] = x.text // strings as their text; numbers and literals as written
		}
		return out, nil
	}
	types, err := strs("Input type", get(1))
	if err != nil {
		return nil, err
	}
	if concrete, err = strs("Concrete Inputs", get(3)); err != nil {
		return nil, err
	}
	n := max(len(dims), len(types), len(concrete))
	in := make([]Input, n)
	for i := range in {
		x := &in[i]
		if i < len(types) {
			x.Type = types[i]
		}
		if i < len(concrete) {
			x.Concrete = concrete[i]
		}
		if i < len(dims) {
			d := dims[i]
			if !d.isList {
				return nil, fmt.Errorf("\"Input Dims\" argument %d is %q, not a shape", i, d.text)
			}
			nested := len(d.list) > 0 && d.list[0].isList
			if !nested {
				x.Dims = make([]int64, len(d.list))
				for k, e := range d.list {
					if e.isList || !e.isNum {
						return nil, fmt.Errorf("\"Input Dims\" argument %d: %q is not a dimension", i, e.text)
					}
					x.Dims[k] = e.num
				}
			} else {
				for _, t := range d.list {
					var dd []int64
					for _, e := range t.list {
						if !e.isNum {
							return nil, fmt.Errorf("\"Input Dims\" argument %d: neither a shape nor a list of shapes", i)
						}
						dd = append(dd, e.num)
					}
					x.List = append(x.List, dd)
				}
			}
		}
		_, isDType := dtypes[x.Type]
		x.Tensor = isDType && x.List == nil
	}
	return in, nil
}

// jval is a parsed JSON value of the shape args: an array (isList,
// list), an integer (isNum, num; text as written), a string (text
// unescaped) or another literal (text as written).
type jval struct {
	isList, isNum bool
	list          []jval
	num           int64
	text          string
}

// parseJSON parses the JSON values record_shapes writes: arrays, numbers,
// strings, literals. An error says at which byte it stopped.
func parseJSON(s string) (jval, error) {
	p := jparser{s: s}
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.ws()
	if p.i != len(s) {
		return v, fmt.Errorf("trailing bytes at %d", p.i)
	}
	return v, nil
}

type jparser struct {
	s string
	i int
}

func (p *jparser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jparser) value() (jval, error) {
	p.ws()
	if p.i >= len(p.s) {
		return jval{}, fmt.Errorf("unexpected end at %d", p.i)
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		v := jval{isList: true, list: []jval{}}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		for {
			e, err := p.value()
			if err != nil {
				return v, err
			}
			v.list = append(v.list, e)
			p.ws()
			if p.i >= len(p.s) {
				return v, fmt.Errorf("unexpected end at %d", p.i)
			}
			if p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.s[p.i] == ']' {
				p.i++
				return v, nil
			}
			return v, fmt.Errorf("expected ',' or ']' at %d", p.i)
		}
	case c == '"':
		start := p.i
		p.i++
		esc := false
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' {
				esc = true
				p.i++
			}
			p.i++
		}
		if p.i >= len(p.s) {
			return jval{}, fmt.Errorf("unterminated string at %d", start)
		}
		p.i++
		raw := p.s[start:p.i]
		if !esc {
			return jval{text: raw[1 : len(raw)-1]}, nil
		}
		t, err := strconv.Unquote(raw)
		if err != nil {
			return jval{text: raw[1 : len(raw)-1]}, nil // kept as written
		}
		return jval{text: t}, nil
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(",] \n\t\r", rune(p.s[p.i])) {
			p.i++
		}
		t := p.s[start:p.i]
		if t == "" {
			return jval{}, fmt.Errorf("unexpected %q at %d", c, start)
		}
		v := jval{text: t}
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			v.isNum, v.num = true, n
		}
		return v, nil
	}
}

func clip(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + "…"
	}
	return strconv.Quote(s)
}

// dtypeInfo is a recorded type's element size and compute class.
type dtypeInfo struct {
	size  int64
	class tracer.DType
}

// dtypes are torch's scalar type names as Kineto records them
// (c10::toString of ScalarType through caffe2::TypeMeta names).
var dtypes = map[string]dtypeInfo{
	"float":                   {4, tracer.DTypeFP32},
	"double":                  {8, tracer.DTypeFP64},
	"c10::Half":               {2, tracer.DTypeFP16},
	"c10::BFloat16":           {2, tracer.DTypeBF16},
	"c10::Float8_e4m3fn":      {1, tracer.DTypeFP8},
	"c10::Float8_e5m2":        {1, tracer.DTypeFP8},
	"c10::Float8_e4m3fnuz":    {1, tracer.DTypeFP8},
	"c10::Float8_e5m2fnuz":    {1, tracer.DTypeFP8},
	"long int":                {8, tracer.DTypeUnknown},
	"int":                     {4, tracer.DTypeUnknown},
	"short int":               {2, tracer.DTypeUnknown},
	"signed char":             {1, tracer.DTypeINT8},
	"unsigned char":           {1, tracer.DTypeINT8},
	"bool":                    {1, tracer.DTypeUnknown},
	"c10::complex<float>":     {8, tracer.DTypeFP32},
	"c10::complex<double>":    {16, tracer.DTypeFP64},
	"c10::complex<c10::Half>": {4, tracer.DTypeFP16},
	// Older PyTorch (1.x) wrote ScalarType names.
	"long":     {8, tracer.DTypeUnknown},
	"Float":    {4, tracer.DTypeFP32},
	"Double":   {8, tracer.DTypeFP64},
	"Half":     {2, tracer.DTypeFP16},
	"BFloat16": {2, tracer.DTypeBF16},
	"Long":     {8, tracer.DTypeUnknown},
	"Int":      {4, tracer.DTypeUnknown},
	"Bool":     {1, tracer.DTypeUnknown},
	"Byte":     {1, tracer.DTypeINT8},
	"Char":     {1, tracer.DTypeINT8},
	"Short":    {2, tracer.DTypeUnknown},
}

// elt returns the element size of a tensor input in bytes.
func (x *Input) elt() int64 { return dtypes[x.Type].size }

// numel returns the number of elements of dims (1 for a 0-dim tensor).
func numel(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}

// bytes returns a tensor input's size in bytes (0 for a non-tensor).
func (x *Input) bytes() float64 {
	if !x.Tensor {
		return 0
	}
	return float64(numel(x.Dims) * x.elt())
}

// ints parses a Concrete value as an integer list: "[1, 2]", "3" (one
// integer), "[]" (none).
func ints(s string) ([]int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	if !strings.HasPrefix(s, "[") {
		v, err := strconv.ParseInt(s, 10, 64)
		return []int64{v}, err == nil
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if strings.TrimSpace(s) == "" {
		return []int64{}, true
	}
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}
