//go:build !embedcupti

package launch

// embeddedLib is empty: this rlktop was built without the tag embedcupti,
// so it carries no CUPTI injection library (see FindLibrary).
var embeddedLib []byte
