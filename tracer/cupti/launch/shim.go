package launch

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/rlktop/rlktop/tracer/pyagent"
)

// EnvTorchRanges turns on the --torch-ranges NVTX ranges of the Python
// agent's sitecustomize (tracer/pyagent/py/rlktop/_ranges.py) when "1".
const EnvTorchRanges = "RLKTOP_TORCH_RANGES"

// ShimDir extracts the Python agent (tracer/pyagent, whose sitecustomize
// also installs the --torch-ranges NVTX ranges when EnvTorchRanges is
// "1") into a private folder under cacheDir ("" as in Options.CacheDir)
// and returns the folder, which goes first on the child's PYTHONPATH.
func ShimDir(cacheDir string) (string, error) {
	return ExtractFiles(cacheDir, "pyagent", pyagent.Files())
}

// ExtractFiles writes files (slash-separated relative path → content) into
// a private folder under cacheDir ("" as in Options.CacheDir) named by
// what and the hash of the contents, and returns the folder. Used for the
// Python agent (tracer/pyagent), which goes on the child's PYTHONPATH.
// Errors name the folder or file that could not be written.
func ExtractFiles(cacheDir, what string, files map[string][]byte) (string, error) {
	names := slices.Sorted(maps.Keys(files))
	content := make([][]byte, 0, 2*len(names))
	for _, n := range names {
		content = append(content, []byte(n), files[n])
	}
	dir, err := extractDir(cacheDir, what, content...)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
		}
		if err := writeOnce(p, files[n], 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
