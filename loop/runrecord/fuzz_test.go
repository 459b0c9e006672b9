package runrecord

import "testing"

func FuzzFromMeta(f *testing.F) {
	f.Add("1", `["python","x.py"]`, "4", "2026-11-29T12:00:00Z", `[{"vendor":"nvidia"}]`)
	f.Add("1", "[", "x", "yesterday", "{")
	f.Fuzz(func(t *testing.T, format, cmd, cpus, start, gpus string) {
		r, err := FromMeta(map[string]string{KeyFormat: format, KeyCommand: cmd, KeyCPUs: cpus, KeyStart: start, KeyGPUs: gpus, KeyEnd: start, KeyExit: cpus})
		if err == nil && r == nil {
			t.Fatal("nil record without error")
		}
		if r != nil {
			_ = r.Meta()
		}
	})
}
