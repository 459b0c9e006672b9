//go:build embedcupti

package launch

import _ "embed"

// embeddedLib is the CUPTI injection library that scripts/build-cupti.sh
// copied here before `go build -tags embedcupti ./cmd/rlktop`.
//
//go:embed librlktop_cupti.so
var embeddedLib []byte
