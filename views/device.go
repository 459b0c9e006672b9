package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/rlktop/rlktop/gpu/reading"
	"github.com/rlktop/rlktop/internal/units"
	"github.com/rlktop/rlktop/tracer/attrib"
)

// Device is the device panel: per GPU its utilisation, memory, power,
// clocks, temperature, throttle reasons and processes (the child's and
// co-tenants'), the child's CPU% and RSS (the only reading on a machine
// without a GPU driver), and the telemetry status lines from gpu.Open —
// calm notes such as "no NVIDIA driver: libnvidia-ml.so.1 not found".
type Device struct {
	st     *Styles
	keys   GroupsKeyMap
	status []string
	sample *reading.Sample
	err    string
	list   list
	w, h   int
}

// NewDevice returns the device panel with gpu.Open's status (its lines
// separated by "; ").
func NewDevice(st *Styles, status string) *Device {
	d := &Device{st: st, keys: DefaultGroupsKeyMap()}
	for _, l := range strings.Split(status, "; ") {
		if l = strings.TrimSpace(l); l != "" {
			d.status = append(d.status, l)
		}
	}
	return d
}

func (d *Device) Title() string { return "Device" }

func (d *Device) Info() string {
	if d.sample == nil {
		return ""
	}
	if n := len(d.sample.Devices); n > 0 {
		return fmt.Sprintf("%d GPU(s)", n)
	}
	return "CPU only"
}

// SetSnapshot is a no-op: the panel shows SetSample's data.
func (d *Device) SetSnapshot(*attrib.Snapshot) {}

// SetSample shows s (nil: nothing sampled yet) and the error of a failed
// sample ("" none).
func (d *Device) SetSample(s *reading.Sample, err string) {
	d.sample, d.err = s, err
	d.list.setLen(len(d.lines()))
}

// Sample returns the sample shown.
func (d *Device) Sample() *reading.Sample { return d.sample }

func (d *Device) SetSize(w, h int) { d.w, d.h = w, h; d.list.setPage(h) }
func (d *Device) SetFocused(bool)  {}
func (d *Device) Capturing() bool  { return false }
func (d *Device) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		d.list.handle(km, d.keys.ListKeyMap)
		d.list.offset = d.list.cursor
		d.list.clamp()
	}
	return nil
}
func (d *Device) ShortHelp() []key.Binding  { return []key.Binding{d.keys.move()} }
func (d *Device) FullHelp() [][]key.Binding { return [][]key.Binding{d.keys.bindings()} }
func (d *Device) Height() int               { return len(d.lines()) }

// CoTenantBanner is the warning shown while another process shares a GPU
// with the child, or "" when none does.
func CoTenantBanner(s *reading.Sample) string {
	if s == nil || len(s.CoTenants) == 0 {
		return ""
	}
	var who []string
	for _, c := range s.CoTenants {
		w := fmt.Sprintf("pid %d on GPU %d", c.PID, c.Device)
		if c.UsedMemBytes >= 0 {
			w += " (" + FormatBytes(c.UsedMemBytes) + ")"
		}
		who = append(who, w)
	}
	return "⚠ co-tenant: " + strings.Join(who, ", ") + " shares the GPU; timings are skewed"
}

func known(v int64, f func(int64) string) string {
	if v < 0 {
		return "?"
	}
	return f(v)
}

func (d *Device) lines() []string {
	st := d.st
	var out []string
	s := d.sample
	if b := CoTenantBanner(s); b != "" {
		out = append(out, " "+st.Live.Warn.Render(b))
	}
	if s == nil {
		out = append(out, " "+st.Table.Dim.Render("no telemetry sample yet"))
	} else {
		ours := map[int]bool{}
		for _, p := range s.Proc.PIDs {
			ours[p] = true
		}
		for i := range s.Devices {
			g := &s.Devices[i]
			pct := func(v int64) string { return fmt.Sprintf("%d%%", v) }
			out = append(out, " "+st.Header.Value.Render(fmt.Sprintf("GPU %d", g.Index))+" "+g.Name+
				"  util "+known(int64(g.UtilPct), pct)+"  mem util "+known(int64(g.MemUtilPct), pct)+
				"  mem "+known(g.MemUsedBytes, FormatBytes)+" / "+known(g.MemTotalBytes, FormatBytes))
			w := func(v int64) string { return fmt.Sprintf("%d", (v+500)/1000) }
			mhz := func(v int64) string { return fmt.Sprintf("%d MHz", v) }
			line := "   power " + known(g.PowerMW, w) + " / " + known(g.PowerLimitMW, w) + " W" +
				"  SM " + known(int64(g.SMClockMHz), mhz) + "  mem " + known(int64(g.MemClockMHz), mhz) +
				"  " + known(int64(g.TempC), func(v int64) string { return fmt.Sprintf("%d °C", v) })
			out = append(out, line)
			switch {
			case !g.ThrottleKnown:
				out = append(out, "   throttle "+st.Table.Dim.Render("not reported"))
			case len(g.Throttle) == 0:
				out = append(out, "   throttle none")
			default:
				out = append(out, "   throttle "+st.Live.Warn.Render(strings.Join(g.Throttle, ", ")))
			}
			if len(g.Processes) > 0 {
				var ps []string
				for _, p := range g.Processes {
					who := "child"
					if !ours[p.PID] {
						who = "co-tenant"
					}
					txt := fmt.Sprintf("%d %s", p.PID, who)
					if p.UsedMemBytes >= 0 {
						txt += " " + FormatBytes(p.UsedMemBytes)
					}
					if who == "co-tenant" {
						txt = st.Live.Warn.Render(txt)
					}
					ps = append(ps, txt)
				}
				out = append(out, "   processes "+strings.Join(ps, " · "))
			}
			if len(g.Errors) > 0 {
				out = append(out, "   "+st.Table.Dim.Render("unread: "+strings.Join(g.Errors, "; ")))
			}
		}
		if s.ProcOK {
			cpu := "…"
			if s.Proc.CPUPct >= 0 {
				cpu = units.Percent(s.Proc.CPUPct)
			}
			out = append(out, fmt.Sprintf(" child CPU %s · RSS %s · %d process(es)", cpu, FormatBytes(s.Proc.RSSBytes), len(s.Proc.PIDs)))
		} else {
			out = append(out, " "+st.Table.Dim.Render("child CPU/RSS: no child running"))
		}
		if s.ForeignPIDs {
			out = append(out, " "+st.Table.Dim.Render("GPU processes are in another pid namespace: co-tenants cannot be told apart"))
		}
	}
	if d.err != "" {
		out = append(out, " "+st.Status.Error.Render(d.err))
	}
	for _, l := range d.status {
		out = append(out, " "+st.Table.Dim.Render(l))
	}
	return out
}

func (d *Device) View() string {
	l := d.lines()
	from := min(d.list.offset, max(len(l)-d.h, 0))
	return block(l[from:], d.w, d.h)
}
