package opmodel

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rlktop/rlktop/tracer"
)

// A formula computes the work of one call of operator name from its
// inputs, with its entry's parameters; an error says what the shapes lack.
type formula func(e *Entry, name string, in []Input) (tracer.Work, error)

var formulas = map[string]formula{
	"mm":            gemm(0, 1, -1, false),
	"addmm":         gemm(1, 2, 0, false),
	"bmm":           gemm(0, 1, -1, true),
	"baddbmm":       gemm(1, 2, 0, true),
	"matmul":        matmul,
	"linear":        matmul,
	"conv":          conv,
	"conv_backward": convBackward,
	"sdpa":          sdpa,
	"sdpa_backward": sdpaBackward,
	"norm":          perInput,
	"softmax":       perInput,
	"reduction":     reduction,
	"elementwise":   elementwise,
	"embedding":     embedding,
	"index_select":  indexSelect,
	"copy":          copyBytes,
	"fill":          fill,
	"cat":           cat,
}

func formulaNames() []string {
	var out []string
	for k := range formulas {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var errNoTensor = errors.New("no tensor input recorded")

func tensor(in []Input, i int, rank ...int) (*Input, error) {
	if i >= len(in) || !in[i].Tensor {
		return nil, fmt.Errorf("argument %d is not a recorded tensor", i)
	}
	if len(rank) > 0 && !slices.Contains(rank, len(in[i].Dims)) {
		return nil, fmt.Errorf("argument %d has shape %v, not of rank %v", i, in[i].Dims, rank)
	}
	return &in[i], nil
}

func work(flops, bytes float64, dt tracer.DType) tracer.Work {
	return tracer.Work{Flops: flops, Bytes: bytes, DType: dt, Modelled: true}
}

func class(x *Input) tracer.DType { return dtypes[x.Type].class }

// gemm: A (index a) [M,K] or [B,M,K] times B (index b) [K,N] or
// [B,K,N], plus an optional addend (index c, -1 none) whose FLOPs are not
// counted. Output [M,N] (or [B,M,N]) at A's dtype.
func gemm(a, b, c int, batched bool) formula {
	rank := 2
	if batched {
		rank = 3
	}
	return func(e *Entry, _ string, in []Input) (tracer.Work, error) {
		x, err := tensor(in, a, rank)
		if err != nil {
			return tracer.Work{}, err
		}
		y, err := tensor(in, b, rank)
		if err != nil {
			return tracer.Work{}, err
		}
		B := int64(1)
		if batched {
			B = x.Dims[0]
		}
		M, K, N := x.Dims[rank-2], x.Dims[rank-1], y.Dims[rank-1]
		if y.Dims[rank-2] != K {
			return tracer.Work{}, fmt.Errorf("inner dimensions differ: %v × %v", x.Dims, y.Dims)
		}
		by := x.bytes() + y.bytes() + float64(B*M*N*x.elt())
		if c >= 0 && c < len(in) {
			by += in[c].bytes()
		}
		return work(2*float64(B*M*N*K), by, class(x)), nil
	}
}

// broadcast returns the broadcast shape of shapes (numpy rules,
// right-aligned); ok false when they do not broadcast.
func broadcast(shapes ...[]int64) ([]int64, bool) {
	n := 0
	for _, s := range shapes {
		n = max(n, len(s))
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for j, d := range s {
			k := n - len(s) + j
			switch {
			case out[k] == 1:
				out[k] = d
			case d != 1 && d != out[k]:
				return nil, false
			}
		}
	}
	return out, true
}

// matmul: torch.matmul's shapes (1-D operands promoted, batch dims
// broadcast) and linear (weight [N,K] used transposed, optional bias).
func matmul(e *Entry, name string, in []Input) (tracer.Work, error) {
	x, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	y, err := tensor(in, 1)
	if err != nil {
		return tracer.Work{}, err
	}
	xd, yd := slices.Clone(x.Dims), slices.Clone(y.Dims)
	if strings.HasSuffix(name, "linear") {
		if len(yd) != 2 {
			return tracer.Work{}, fmt.Errorf("linear weight has shape %v, not [N,K]", yd)
		}
		yd = []int64{yd[1], yd[0]}
	}
	if len(xd) == 0 || len(yd) == 0 {
		return tracer.Work{}, fmt.Errorf("0-dimensional operand")
	}
	if len(xd) == 1 {
		xd = []int64{1, xd[0]}
	}
	if len(yd) == 1 {
		yd = []int64{yd[0], 1}
	}
	M, K, N := xd[len(xd)-2], xd[len(xd)-1], yd[len(yd)-1]
	if yd[len(yd)-2] != K {
		return tracer.Work{}, fmt.Errorf("inner dimensions differ: %v × %v", x.Dims, y.Dims)
	}
	batch, ok := broadcast(xd[:len(xd)-2], yd[:len(yd)-2])
	if !ok {
		return tracer.Work{}, fmt.Errorf("batch dimensions do not broadcast: %v × %v", x.Dims, y.Dims)
	}
	B := numel(batch)
	by := x.bytes() + y.bytes() + float64(B*M*N*x.elt())
	if len(in) > 2 {
		by += in[2].bytes()
	}
	return work(2*float64(B*M*N*K), by, class(x)), nil
}

// convArgs reads stride, padding, dilation, transposed and groups at the
// positions e.Args gives, for nd spatial dims.
func convArgs(e *Entry, in []Input, nd int) (stride, pad, dil []int64, transposed bool, groups int64, err error) {
	list := func(pos int, def int64) ([]int64, error) {
		out := make([]int64, nd)
		for i := range out {
			out[i] = def
		}
		if pos < 0 || pos >= len(in) || in[pos].Concrete == "" {
			return out, nil
		}
		c := in[pos].Concrete
		switch c {
		case "valid":
			return make([]int64, nd), nil
		case "same":
			return nil, nil // the caller keeps the input's size
		}
		v, ok := ints(c)
		if !ok {
			return nil, fmt.Errorf("argument %d %q is not an integer list", pos, c)
		}
		for i := range out {
			switch len(v) {
			case 1:
				out[i] = v[0]
			case nd:
				out[i] = v[i]
			default:
				return nil, fmt.Errorf("argument %d %q has %d values for %d spatial dims", pos, c, len(v), nd)
			}
		}
		return out, nil
	}
	if stride, err = list(e.Args[0], 1); err != nil {
		return
	}
	if pad, err = list(e.Args[1], 0); err != nil {
		return
	}
	if dil, err = list(e.Args[2], 1); err != nil {
		return
	}
	if p := e.Args[3]; p >= 0 && p < len(in) {
		transposed = in[p].Concrete == "True" || in[p].Concrete == "1"
	}
	groups = 1
	if p := e.Args[4]; p >= 0 && p < len(in) && in[p].Concrete != "" {
		g, ok := ints(in[p].Concrete)
		if !ok || len(g) != 1 || g[0] < 1 {
			return nil, nil, nil, false, 0, fmt.Errorf("groups %q is not a positive integer", in[p].Concrete)
		}
		groups = g[0]
	}
	return
}

// convCount is torch.utils.flop_counter's conv_flop_count: 2 · N · Cout ·
// Cin_w · prod(kernel) · prod(conv spatial), where the weight is [Cout,
// Cin_w, k…] and the spatial extent is the output's (the input's when
// transposed).
func convCount(x, w, out []int64, transposed bool) float64 {
	sp := out[2:]
	if transposed {
		sp = x[2:]
	}
	return 2 * float64(x[0]) * float64(w[0]) * float64(w[1]) * float64(numel(w[2:])) * float64(numel(sp))
}

// convOut returns the output shape of a convolution of x by w.
func convOut(x, w, stride, pad, dil []int64, transposed bool, groups int64) []int64 {
	nd := len(x) - 2
	out := []int64{x[0], w[0]}
	if transposed {
		out[1] = w[1] * groups
	}
	for i := 0; i < nd; i++ {
		in, k := x[2+i], w[2+i]
		switch {
		case stride == nil || pad == nil || dil == nil: // padding "same"
			out = append(out, in)
		case transposed:
			out = append(out, (in-1)*stride[i]-2*pad[i]+dil[i]*(k-1)+1)
		default:
			out = append(out, (in+2*pad[i]-dil[i]*(k-1)-1)/stride[i]+1)
		}
	}
	return out
}

func conv(e *Entry, _ string, in []Input) (tracer.Work, error) {
	x, err := tensor(in, 0, 3, 4, 5)
	if err != nil {
		return tracer.Work{}, err
	}
	w, err := tensor(in, 1, len(x.Dims))
	if err != nil {
		return tracer.Work{}, err
	}
	stride, pad, dil, tr, groups, err := convArgs(e, in, len(x.Dims)-2)
	if err != nil {
		return tracer.Work{}, err
	}
	out := convOut(x.Dims, w.Dims, stride, pad, dil, tr, groups)
	by := x.bytes() + w.bytes() + float64(numel(out)*x.elt())
	if len(in) > 2 {
		by += in[2].bytes()
	}
	return work(convCount(x.Dims, w.Dims, out, tr), by, class(x)), nil
}

// convBackward: grad input and grad weight as output_mask (argument 10,
// default both) asks, each the forward's count
// (torch.utils.flop_counter conv_backward_flop).
func convBackward(e *Entry, _ string, in []Input) (tracer.Work, error) {
	g, err := tensor(in, 0, 3, 4, 5)
	if err != nil {
		return tracer.Work{}, err
	}
	x, err := tensor(in, 1, len(g.Dims))
	if err != nil {
		return tracer.Work{}, err
	}
	w, err := tensor(in, 2, len(g.Dims))
	if err != nil {
		return tracer.Work{}, err
	}
	_, _, _, tr, _, err := convArgs(e, in, len(g.Dims)-2)
	if err != nil {
		return tracer.Work{}, err
	}
	mask := []bool{true, true, false}
	if len(in) > 10 && in[10].Concrete != "" {
		c := strings.Trim(in[10].Concrete, "[]")
		for i, f := range strings.Split(c, ",") {
			if i < len(mask) {
				mask[i] = strings.TrimSpace(f) == "True"
			}
		}
	}
	fwd := convCount(x.Dims, w.Dims, g.Dims, tr)
	var flops, by float64
	by = g.bytes() + x.bytes() + w.bytes()
	if mask[0] {
		flops += fwd
		by += x.bytes()
	}
	if mask[1] {
		flops += fwd
		by += w.bytes()
	}
	if mask[2] {
		by += float64(g.Dims[1] * g.elt())
	}
	return work(flops, by, class(x)), nil
}

// attn reads query, key and value at q, q+1, q+2 in e.Layout: B, H (query
// heads), T (query length), S (key length), d (query/key head width), dv
// (value head width), and whether the call is causal.
type attnDims struct {
	B, H, T, S, D, DV int64
	causal            bool
}

func attn(e *Entry, in []Input, q int) (attnDims, *Input, error) {
	var a attnDims
	qx, err := tensor(in, q, 3, 4)
	if err != nil {
		return a, nil, err
	}
	kx, err := tensor(in, q+1, len(qx.Dims))
	if err != nil {
		return a, nil, err
	}
	vx, err := tensor(in, q+2, len(qx.Dims))
	if err != nil {
		return a, nil, err
	}
	qd, kd, vd := qx.Dims, kx.Dims, vx.Dims
	if len(qd) == 3 { // [B,T,d]: one head
		qd, kd, vd = []int64{qd[0], 1, qd[1], qd[2]}, []int64{kd[0], 1, kd[1], kd[2]}, []int64{vd[0], 1, vd[1], vd[2]}
	} else if e.Layout == "bthd" {
		sw := func(d []int64) []int64 { return []int64{d[0], d[2], d[1], d[3]} }
		qd, kd, vd = sw(qd), sw(kd), sw(vd)
	}
	a = attnDims{B: qd[0], H: qd[1], T: qd[2], S: kd[2], D: qd[3], DV: vd[3]}
	if e.Causal != nil && *e.Causal >= 0 && *e.Causal < len(in) {
		c := in[*e.Causal].Concrete
		a.causal = c == "True" || c == "1"
	}
	return a, qx, nil
}

func (a attnDims) forward() float64 {
	f := 2*float64(a.B*a.H*a.T*a.S*a.D) + 2*float64(a.B*a.H*a.T*a.S*a.DV)
	if a.causal {
		f /= 2
	}
	return f
}

// sdpa: Q·Kᵀ and P·V (sdpa_flop_count), halved when causal; bytes Q, K, V
// (and any mask) read, the output [B,H,T,dv] written.
func sdpa(e *Entry, _ string, in []Input) (tracer.Work, error) {
	a, q, err := attn(e, in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	by := float64(a.B * a.H * a.T * a.DV * q.elt())
	for i := range in {
		by += in[i].bytes()
	}
	return work(a.forward(), by, class(q)), nil
}

// sdpaBackward: 2× the forward; bytes every tensor input (grad_out, Q,
// K, V, out, logsumexp) read and dQ, dK, dV written.
func sdpaBackward(e *Entry, _ string, in []Input) (tracer.Work, error) {
	a, q, err := attn(e, in, 1)
	if err != nil {
		return tracer.Work{}, err
	}
	var by float64
	for i := range in {
		by += in[i].bytes()
	}
	by += in[1].bytes() + in[2].bytes() + in[3].bytes()
	return work(2*a.forward(), by, class(q)), nil
}

// perInput: per_element FLOPs per element of input 0 (norms, softmax);
// bytes every tensor input read and one output of input 0's size written.
func perInput(e *Entry, _ string, in []Input) (tracer.Work, error) {
	x, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	n := numel(x.Dims)
	by := x.bytes()
	for i := range in {
		by += in[i].bytes()
	}
	return work(e.PerElement*float64(n), by, class(x)), nil
}

// boolOut: comparisons and tests write bool.
func boolOut(name string) bool {
	base := strings.TrimSuffix(strings.TrimPrefix(name, "aten::"), "_")
	switch base {
	case "eq", "ne", "lt", "gt", "le", "ge", "isneginf", "isnan", "logical_not":
		return true
	}
	return false
}

// elementwise: per_element FLOPs per output element, the output the
// broadcast of the tensor inputs at the first tensor's dtype (bool for
// comparisons); bytes inputs read and the output written.
func elementwise(e *Entry, name string, in []Input) (tracer.Work, error) {
	var shapes [][]int64
	var first *Input
	var by float64
	for i := range in {
		if in[i].Tensor {
			shapes = append(shapes, in[i].Dims)
			by += in[i].bytes()
			if first == nil || (len(first.Dims) == 0 && len(in[i].Dims) > 0) {
				first = &in[i]
			}
		}
	}
	if first == nil {
		return tracer.Work{}, errNoTensor
	}
	out, ok := broadcast(shapes...)
	if !ok {
		// An empty tensor beside others it cannot broadcast with is the
		// out= buffer the call resizes (torch 2.6 records x.abs() as
		// aten::abs [[64, 7]] around aten::abs [[64, 7], [0]]): the rest
		// give the output.
		var rest [][]int64
		for _, d := range shapes {
			if numel(d) != 0 {
				rest = append(rest, d)
			}
		}
		if out, ok = broadcast(rest...); !ok || len(rest) == len(shapes) || len(rest) == 0 {
			return tracer.Work{}, fmt.Errorf("input shapes %v do not broadcast", shapes)
		}
	}
	n := numel(out)
	elt := first.elt()
	if boolOut(name) {
		elt = 1
	}
	return work(e.PerElement*float64(n), by+float64(n*elt), class(first)), nil
}

// reduction: per_element FLOPs per input element; the output shape from
// the first integer-list argument after the input (the dims reduced,
// keepdim or not: their product is what is removed) — all dims when none.
func reduction(e *Entry, _ string, in []Input) (tracer.Work, error) {
	x, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	n := numel(x.Dims)
	outN := int64(1)
	for i := 1; i < len(in); i++ {
		if in[i].Tensor {
			continue
		}
		dims, ok := ints(in[i].Concrete)
		if !ok || !strings.HasPrefix(strings.TrimSpace(in[i].Concrete), "[") && in[i].Type != "Scalar" {
			continue
		}
		if len(dims) == 0 {
			break // [] reduces every dim
		}
		outN = n
		for _, d := range dims {
			if d < 0 {
				d += int64(len(x.Dims))
			}
			if d >= 0 && int(d) < len(x.Dims) && x.Dims[d] > 0 {
				outN /= x.Dims[d]
			}
		}
		break
	}
	return work(e.PerElement*float64(n), x.bytes()+float64(outN*x.elt()), class(x)), nil
}

// embedding: weight [V,D] (argument 0) looked up by indices (argument
// 1): the indices read, each row read and written. The backward's
// grad_output [*, D] (argument 0) and indices (argument 1): grad read and
// scattered.
func embedding(e *Entry, name string, in []Input) (tracer.Work, error) {
	w, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	idx, err := tensor(in, 1)
	if err != nil {
		return tracer.Work{}, err
	}
	if strings.HasSuffix(name, "backward") {
		return work(0, 2*w.bytes()+idx.bytes(), class(w)), nil
	}
	if len(w.Dims) != 2 {
		return tracer.Work{}, fmt.Errorf("weight has shape %v, not [V,D]", w.Dims)
	}
	rows := float64(numel(idx.Dims) * w.Dims[1] * w.elt())
	return work(0, idx.bytes()+2*rows, class(w)), nil
}

// indexSelect: self (0), dim (1), index (2): the index read, the selected
// elements read and written; gather(self, dim, index): one element per
// index.
func indexSelect(e *Entry, name string, in []Input) (tracer.Work, error) {
	x, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	idx, err := tensor(in, 2)
	if err != nil {
		return tracer.Work{}, err
	}
	outN := numel(idx.Dims)
	if !strings.HasSuffix(name, "gather") {
		d, ok := ints(in[1].Concrete)
		if !ok || len(d) != 1 {
			return tracer.Work{}, fmt.Errorf("dim %q is not an integer", in[1].Concrete)
		}
		k := d[0]
		if k < 0 {
			k += int64(len(x.Dims))
		}
		if k < 0 || int(k) >= len(x.Dims) || x.Dims[k] == 0 {
			return tracer.Work{}, fmt.Errorf("dim %d out of range for %v", d[0], x.Dims)
		}
		outN = numel(x.Dims) / x.Dims[k] * numel(idx.Dims)
	}
	return work(0, idx.bytes()+2*float64(outN*x.elt()), class(x)), nil
}

// copyBytes: copy_(self, src): src read, self written.
func copyBytes(e *Entry, _ string, in []Input) (tracer.Work, error) {
	dst, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	src, err := tensor(in, 1)
	if err != nil {
		return tracer.Work{}, err
	}
	return work(0, dst.bytes()+src.bytes(), class(dst)), nil
}

// fill: the tensor (argument 0) written.
func fill(e *Entry, _ string, in []Input) (tracer.Work, error) {
	x, err := tensor(in, 0)
	if err != nil {
		return tracer.Work{}, err
	}
	return work(0, x.bytes(), class(x)), nil
}

// cat: every listed tensor read and written; a TensorList's dtype is not
// recorded, so its elements are taken as 4 bytes.
func cat(e *Entry, _ string, in []Input) (tracer.Work, error) {
	if len(in) > 0 && in[0].Type == "TensorList" && len(in[0].List) == 0 {
		// Some torch.profiler versions write [] for every TensorList
		// (HTA's A100 sample trace does): its shapes were not recorded.
		return tracer.Work{}, errors.New("argument 0, a tensor list, was recorded without its tensors' shapes")
	}
	if len(in) == 0 || in[0].List == nil {
		return tracer.Work{}, errors.New("argument 0 is not a recorded tensor list")
	}
	var n int64
	for _, d := range in[0].List {
		n += numel(d)
	}
	return work(0, 2*float64(n*4), tracer.DTypeUnknown), nil
}
