package launch

import (
	_ "embed"
	"path/filepath"
)

// shimSource is the --torch-ranges Python shim (pyshim/sitecustomize.py).
//
//go:embed pyshim/sitecustomize.py
var shimSource []byte

// ShimDir extracts the --torch-ranges shim into a private folder under
// cacheDir ("" as in Options.CacheDir) and returns the folder, which goes
// first on the child's PYTHONPATH.
func ShimDir(cacheDir string) (string, error) {
	dir, err := extractDir(cacheDir, "pyshim", shimSource)
	if err != nil {
		return "", err
	}
	return dir, writeOnce(filepath.Join(dir, "sitecustomize.py"), shimSource, 0o644)
}
