package proc

import "testing"

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("77 (we) ird (name) S 5 77 77 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 1 0 100 1000 200\n"))
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseStat(b)
		if err == nil && p.PID != 0 {
			t.Fatal("ParseStat set a pid")
		}
	})
}

func BenchmarkSample(b *testing.B) {
	s := New(1, "")
	if _, err := s.Sample(); err != nil {
		b.Skipf("cannot sample pid 1: %v", err)
	}
	for b.Loop() {
		if _, err := s.Sample(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	for b.Loop() {
		if _, err := Scan("/proc"); err != nil {
			b.Fatal(err)
		}
	}
}
