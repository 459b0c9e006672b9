package attrib

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/rlktop/rlktop/tracer"
)

// Peak is a device's limits: peak dense FLOP/s per dtype and memory
// bandwidth, with where the numbers come from (devices.toml, a user file,
// or a measurement on this machine).
type Peak struct {
	Device string // the table row's name ("NVIDIA H100 SXM"), or "CPU (measured)"
	// Match is the device name the row was matched on, as the source gave it.
	Match string
	// Source is the datasheet (or "measured on this machine: …").
	Source string
	// Measured is true for a peak measured here (a CPU's: GEMM and copy
	// microbenchmarks), not read from a datasheet.
	Measured bool
	// FlopsPerS by tracer.DType (0: the device has no peak for it; the
	// fp32 peak is used then).
	FlopsPerS [8]float64
	BytesPerS float64 // memory bandwidth, bytes/s
}

// PeakMetaPrefix starts the run-record keys a recording stores its
// measured peak under (Meta, PeakFromMeta).
const PeakMetaPrefix = "peak."

// Meta is p as run-record keys (PeakMetaPrefix + device, source,
// bytes_per_s, flops_per_s.<dtype>), so that a recording read on
// another machine, or after this one's cache was measured again, is
// read against the peak its run was.
func (p *Peak) Meta() map[string]string {
	m := map[string]string{
		PeakMetaPrefix + "device":      p.Device,
		PeakMetaPrefix + "source":      p.Source,
		PeakMetaPrefix + "bytes_per_s": strconv.FormatFloat(p.BytesPerS, 'g', -1, 64),
	}
	for d, f := range p.FlopsPerS {
		if f > 0 && d > 0 {
			m[PeakMetaPrefix+"flops_per_s."+tracer.DType(d).String()] = strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return m
}

// PeakFromMeta is the measured peak a recording stored (Meta), or nil
// when meta holds none or a figure does not parse.
func PeakFromMeta(meta map[string]string) *Peak {
	dev, ok := meta[PeakMetaPrefix+"device"]
	if !ok {
		return nil
	}
	bw, err := strconv.ParseFloat(meta[PeakMetaPrefix+"bytes_per_s"], 64)
	if err != nil || bw <= 0 {
		return nil
	}
	// The source said "measured on this machine" where it was measured.
	src := strings.Replace(meta[PeakMetaPrefix+"source"], "on this machine", "where the recording was made", 1)
	p := &Peak{Device: dev, Match: dev, Measured: true, BytesPerS: bw, Source: "stored in the recording: " + src}
	for k, v := range meta {
		name, ok := strings.CutPrefix(k, PeakMetaPrefix+"flops_per_s.")
		if !ok {
			continue
		}
		d, ok := tracer.ParseDType(name)
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || f <= 0 || int(d) >= len(p.FlopsPerS) {
			return nil
		}
		p.FlopsPerS[d] = f
	}
	if p.FlopsPerS[tracer.DTypeFP32] <= 0 {
		return nil
	}
	return p
}

// FlopsFor returns the peak FLOP/s for work at dtype dt: its own peak,
// else the fp32 one.
func (p *Peak) FlopsFor(dt tracer.DType) float64 {
	if int(dt) < len(p.FlopsPerS) && p.FlopsPerS[dt] > 0 {
		return p.FlopsPerS[dt]
	}
	return p.FlopsPerS[tracer.DTypeFP32]
}

// Bound says which roof limits a row: "compute" or "memory".
type Bound string

const (
	BoundCompute Bound = "compute"
	BoundMemory  Bound = "memory"
)

// Rates are a row's achieved rates and its place on the roofline.
type Rates struct {
	Flops, Bytes float64
	// Intensity is FLOPs per byte (0 when no bytes).
	Intensity float64
	// FlopsPerS and BytesPerS are achieved: Flops and Bytes over the
	// time of the kernels that carry them (Work.Ns).
	FlopsPerS, BytesPerS float64
	// Bound and OfPeak are set when the device's peak is known: the
	// roof that limits the row (compute when its work at peak FLOP/s takes
	// longer than its bytes at peak bandwidth: intensity above the ridge
	// point) and the share of that roof reached (achieved FLOP/s over
	// peak FLOP/s, or achieved bytes/s over bandwidth).
	Bound  Bound
	OfPeak float64
}

// RatesOf returns w's rates against p (nil p: no bound, no share).
// Mixed dtypes are weighed by their own peaks: the compute time at peak
// is Σ FLOPs_d / peak_d.
func RatesOf(w Work, p *Peak) Rates {
	r := Rates{Flops: w.Flops, Bytes: w.Bytes}
	if w.Bytes > 0 {
		r.Intensity = w.Flops / w.Bytes
	}
	if w.Ns <= 0 {
		return r
	}
	sec := float64(w.Ns) / 1e9
	r.FlopsPerS, r.BytesPerS = w.Flops/sec, w.Bytes/sec
	if p == nil || p.BytesPerS <= 0 || p.FlopsFor(tracer.DTypeFP32) <= 0 {
		return r
	}
	r.Bound = boundOf(&w, p)
	if r.Bound == BoundCompute {
		r.OfPeak = computeSeconds(&w, p) / sec
	} else {
		r.OfPeak = w.Bytes / p.BytesPerS / sec
	}
	return r
}

// boundOf is the roof that limits w at p's peaks: compute when its FLOPs
// take at least as long at the compute peak as its bytes at the memory
// bandwidth (and some time at all), else memory. p must have a bandwidth
// and an fp32 peak.
func boundOf(w *Work, p *Peak) Bound {
	if tc := computeSeconds(w, p); tc >= w.Bytes/p.BytesPerS && tc > 0 {
		return BoundCompute
	}
	return BoundMemory
}

// computeSeconds is the time w's FLOPs take at p's peaks.
func computeSeconds(w *Work, p *Peak) float64 {
	var t float64
	for d, f := range w.FlopsByDType {
		if f > 0 {
			t += f / p.FlopsFor(tracer.DType(d))
		}
	}
	return t
}

// MFU is model FLOPs utilisation: the time w's FLOPs take at p's peaks
// (per dtype) over wallNs, the step's wall time; 0 when either is unknown.
// The FLOPs follow opmodel.Convention.
func MFU(w Work, p *Peak, wallNs int64) float64 {
	if p == nil || wallNs <= 0 || p.FlopsFor(tracer.DTypeFP32) <= 0 {
		return 0
	}
	return computeSeconds(&w, p) / (float64(wallNs) / 1e9)
}

// Ridge returns the ridge point of p at dtype dt: the intensity (FLOPs
// per byte) where the compute roof meets the memory roof.
func (p *Peak) Ridge(dt tracer.DType) float64 {
	if p.BytesPerS <= 0 {
		return 0
	}
	return p.FlopsFor(dt) / p.BytesPerS
}

//go:embed devices.toml
var devicesTOML string

// PeakTable is the device table: rows tried in order.
type PeakTable struct {
	rows []peakRow
}

type peakRow struct {
	Name      string             `toml:"name"`
	Match     string             `toml:"match"`
	TFlops    map[string]float64 `toml:"tflops"`
	Bandwidth float64            `toml:"bandwidth_gbs"`
	Source    string             `toml:"source"`
	re        *regexp.Regexp
}

var defaultPeaks = func() *PeakTable {
	t, err := parsePeaks(devicesTOML, "devices.toml (built in)")
	if err != nil {
		panic(err)
	}
	return t
}()

// DefaultPeaks returns the built-in device table (devices.toml).
func DefaultPeaks() *PeakTable { return defaultPeaks }

// LoadPeaks returns the device table with the rows of the TOML file at
// path tried first ("" : the built-in table). Errors name the file and
// row.
func LoadPeaks(path string) (*PeakTable, error) {
	if path == "" {
		return defaultPeaks, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("device peaks: %w", err)
	}
	u, err := parsePeaks(string(data), path)
	if err != nil {
		return nil, err
	}
	return &PeakTable{rows: append(u.rows, defaultPeaks.rows...)}, nil
}

func parsePeaks(text, where string) (*PeakTable, error) {
	var f struct {
		Device []peakRow `toml:"device"`
	}
	md, err := toml.Decode(text, &f)
	if err != nil {
		return nil, fmt.Errorf("device peaks %s: %w", where, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("device peaks %s: unknown key %q (known: name, match, tflops, bandwidth_gbs, source)", where, und[0].String())
	}
	t := &PeakTable{}
	for i, r := range f.Device {
		if r.Name == "" || r.Match == "" {
			return nil, fmt.Errorf("device peaks %s: [[device]] %d needs a name and a match", where, i+1)
		}
		re, err := regexp.Compile("(?i)" + r.Match)
		if err != nil {
			return nil, fmt.Errorf("device peaks %s: [[device]] %d (%s): match: %w", where, i+1, r.Name, err)
		}
		for k := range r.TFlops {
			if _, ok := tracer.ParseDType(k); !ok {
				return nil, fmt.Errorf("device peaks %s: [[device]] %d (%s): unknown dtype %q in tflops (known: fp64, fp32, tf32, bf16, fp16, fp8, int8)", where, i+1, r.Name, k)
			}
		}
		if r.TFlops["fp32"] <= 0 || r.Bandwidth <= 0 {
			return nil, fmt.Errorf("device peaks %s: [[device]] %d (%s) needs tflops.fp32 and bandwidth_gbs", where, i+1, r.Name)
		}
		r.re = re
		t.rows = append(t.rows, r)
	}
	return t, nil
}

// Lookup returns the peak of the device named name (as a trace, NVML or
// ROCm SMI names it), or nil when no row matches.
func (t *PeakTable) Lookup(name string) *Peak {
	if strings.TrimSpace(name) == "" {
		return nil
	}
	for i := range t.rows {
		r := &t.rows[i]
		if !r.re.MatchString(name) {
			continue
		}
		p := &Peak{Device: r.Name, Match: name, Source: r.Source, BytesPerS: r.Bandwidth * 1e9}
		for k, v := range r.TFlops {
			d, _ := tracer.ParseDType(k)
			p.FlopsPerS[d] = v * 1e12
		}
		return p
	}
	return nil
}

// PeakFor returns the peak of the first device of s that ran work and
// that the table knows, or nil with the reason in words ("no device
// named", "device \"X\" is not in the device table").
func (t *PeakTable) PeakFor(s *Snapshot) (*Peak, string) {
	return t.peakOf(s.WorkingDevices())
}

// NoGPUNote is PeakFor's reason when the devices that ran work name no
// GPU.
const NoGPUNote = "the source names no GPU"

// SourcePeak is PeakFor over the devices of one source of several
// (Snapshot.DeviceSource): those of source index i that ran work.
func (t *PeakTable) SourcePeak(s *Snapshot, i int) (*Peak, string) {
	var devs []tracer.Device
	if len(s.DeviceSource) == len(s.Devices) {
		for k, d := range s.Devices {
			if s.DeviceSource[k] == i && (len(s.DeviceWork) != len(s.Devices) || s.DeviceWork[k]) {
				devs = append(devs, d)
			}
		}
	}
	return t.peakOf(devs)
}

func (t *PeakTable) peakOf(devs []tracer.Device) (*Peak, string) {
	var names []string
	for _, d := range devs {
		if d.Name == "" || strings.EqualFold(d.Vendor, "cpu") {
			continue
		}
		if p := t.Lookup(d.Name); p != nil {
			return p, ""
		}
		names = append(names, fmt.Sprintf("%q", d.Name))
	}
	if len(names) == 0 {
		return nil, NoGPUNote
	}
	return nil, "device " + strings.Join(names, ", ") + " is not in the device table (add it with --device-peaks FILE)"
}
