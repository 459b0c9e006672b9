package cupti

import "unsafe"

// MaxCString bounds how many bytes CMemory.CString reads looking for the
// terminating NUL.
const MaxCString = 1 << 16

// CMemory reads C memory: the pointer fields of records in a buffer that
// CUPTI filled. Use it only on buffers whose pointers CUPTI wrote.
type CMemory struct {
	// APINames returns CUPTI's name of a callback id (cuptiGetCallbackName);
	// nil leaves API names numbered.
	APINames func(domain int, cbid uint32) string
}

// CString reads the NUL-terminated string at the pointer stored at
// rec[off:off+8], byte by byte so as never to read past its NUL, at most
// MaxCString bytes.
func (m CMemory) CString(rec []byte, off int) []byte {
	if off < 0 || off+8 > len(rec) {
		return nil
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&rec[off]))
	if p == nil {
		return nil
	}
	n := 0
	for n < MaxCString && *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return unsafe.Slice((*byte)(p), n)
}

// APIName implements Memory.
func (m CMemory) APIName(domain int, cbid uint32) string {
	if m.APINames == nil {
		return ""
	}
	return m.APINames(domain, cbid)
}
