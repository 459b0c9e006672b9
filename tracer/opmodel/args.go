package opmodel

import (
	"encoding/json"
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
	var dims []json.RawMessage
	var types, concrete []string
	if s := get(0); s != "" {
		if err := json.Unmarshal([]byte(s), &dims); err != nil {
			return nil, fmt.Errorf("\"Input Dims\" %s: %w", clip(s), err)
		}
	}
	if s := get(1); s != "" {
		if err := json.Unmarshal([]byte(s), &types); err != nil {
			return nil, fmt.Errorf("\"Input type\" %s: %w", clip(s), err)
		}
	}
	if s := get(3); s != "" {
		// Concrete Inputs are strings; a few exporters write numbers.
		var raw []any
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			return nil, fmt.Errorf("\"Concrete Inputs\" %s: %w", clip(s), err)
		}
		for _, v := range raw {
			switch x := v.(type) {
			case string:
				concrete = append(concrete, x)
			case nil:
				concrete = append(concrete, "")
			default:
				concrete = append(concrete, fmt.Sprint(x))
			}
		}
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
			var flat []int64
			if json.Unmarshal(dims[i], &flat) == nil {
				x.Dims = flat
			} else {
				var list [][]int64
				if err := json.Unmarshal(dims[i], &list); err != nil {
					return nil, fmt.Errorf("\"Input Dims\" argument %d %s: neither a shape nor a list of shapes", i, clip(string(dims[i])))
				}
				x.List = list
			}
		}
		_, isDType := dtypes[x.Type]
		x.Tensor = isDType && x.List == nil
	}
	return in, nil
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
