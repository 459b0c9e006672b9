package archtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rlktop/rlktop/internal/testutil"
)

const module = "github.com/rlktop/rlktop/"

// viewForbidden reports whether the view layer (views, tui) may not depend
// on the module package rel (path below the module): the process layer
// (loop, tracer/session, gpu — but gpu/reading, its plain data), the
// importers (tracer/tracefile) and the wire protocol's codec and
// transports (tracer/wire — but tracer/wire/msg, its plain payload
// values). ARCHITECTURE.md: views → tracer/attrib.
func viewForbidden(rel string) bool {
	under := func(p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") }
	if rel == "gpu/reading" || rel == "tracer/wire/msg" {
		return false
	}
	return under("loop") || under("gpu") || under("tracer/session") || under("tracer/tracefile") || under("tracer/wire")
}

// layerCheck finds, in graph (package → its imports, module packages by
// their path below the module), the direct imports from the roots into
// forbidden packages ("root -> pkg") and the forbidden packages reached
// some other way, each with one import path from a root ("a -> b -> c").
func layerCheck(graph map[string][]string, roots []string, forbidden func(string) bool) (edges, indirect []string) {
	// Breadth first from the roots, not through forbidden packages: a
	// direct edge into one is reported as an edge; reaching one from a
	// non-root is an indirect path.
	from := map[string]string{}
	queue := slices.Clone(roots)
	for _, r := range roots {
		from[r] = ""
	}
	isRoot := func(p string) bool { return slices.Contains(roots, p) }
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range graph[p] {
			if forbidden(q) {
				if isRoot(p) {
					edges = append(edges, p+" -> "+q)
				} else {
					path := []string{q, p}
					for x := from[p]; x != ""; x = from[x] {
						path = append(path, x)
					}
					slices.Reverse(path)
					indirect = append(indirect, strings.Join(path, " -> "))
				}
				continue
			}
			if _, seen := from[q]; !seen {
				from[q] = p
				queue = append(queue, q)
			}
		}
	}
	slices.Sort(edges)
	slices.Sort(indirect)
	return slices.Compact(edges), slices.Compact(indirect)
}

// moduleGraph runs `go list -deps` on patterns and returns the import
// graph of the module's packages (paths below the module) and the module
// packages the patterns name.
func moduleGraph(t *testing.T, patterns ...string) (graph map[string][]string, named []string) {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		goTool = "go"
	}
	list := func(args ...string) []string {
		cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
		cmd.Dir = testutil.RepoRoot(t)
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = string(ee.Stderr)
			}
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	graph = map[string][]string{}
	for _, line := range list(append([]string{"-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, patterns...)...) {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		p := strings.TrimPrefix(f[0], module)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				graph[p] = append(graph[p], strings.TrimPrefix(imp, module))
			}
		}
	}
	for _, p := range list(patterns...) {
		named = append(named, strings.TrimPrefix(p, module))
	}
	return graph, named
}

// TestViewLayerDependencies: `go list -deps ./views/... ./tui/...` holds
// none of loop, tracer/session, gpu (gpu/reading allowed) or
// tracer/tracefile (the views draw the plain types of tracer/livestate
// and gpu/reading; cmd/rlktop wires the process layer to them). A direct
// import fails naming the file; one through another package fails naming
// the chain.
func TestViewLayerDependencies(t *testing.T) {
	graph, roots := moduleGraph(t, "./views/...", "./tui/...")
	edges, indirect := layerCheck(graph, roots, viewForbidden)
	for _, p := range indirect {
		t.Errorf("the view layer reaches a forbidden package through another one: %s", p)
	}
	if len(edges) > 0 {
		t.Errorf("the view layer imports the process layer or the importers: %s (in %s); views and tui take the plain types of tracer/livestate and gpu/reading (see ARCHITECTURE.md)",
			strings.Join(edges, ", "), strings.Join(importingFiles(t, roots, viewForbidden), ", "))
	}
}

// importingFiles names the files of the packages pkgs (paths below the
// module) that import a forbidden package, with what they import.
func importingFiles(t *testing.T, pkgs []string, forbidden func(string) bool) []string {
	t.Helper()
	var out []string
	root := testutil.RepoRoot(t)
	for _, p := range pkgs {
		files, _ := filepath.Glob(filepath.Join(root, p, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			var bad []string
			for _, imp := range af.Imports {
				if q, ok := strings.CutPrefix(strings.Trim(imp.Path.Value, `"`), module); ok && forbidden(q) {
					bad = append(bad, q)
				}
			}
			if len(bad) > 0 {
				out = append(out, filepath.Join(p, filepath.Base(f))+": "+strings.Join(bad, " "))
			}
		}
	}
	return out
}

// TestLayerCheck runs the analysis on a made-up graph with one known
// kind of each finding, worked out by hand.
func TestLayerCheck(t *testing.T) {
	graph := map[string][]string{
		"views":         {"tracer/attrib", "loop", "report"},
		"tui":           {"views", "gpu/reading"},
		"report":        {"tracer/attrib", "tracer/tracefile"},
		"tracer/attrib": {"tracer"},
		"loop":          {"tracer/session"},
	}
	edges, indirect := layerCheck(graph, []string{"views", "tui"}, viewForbidden)
	wantEdges := []string{"views -> loop"}
	wantIndirect := []string{"views -> report -> tracer/tracefile"}
	if fmt.Sprint(edges) != fmt.Sprint(wantEdges) || fmt.Sprint(indirect) != fmt.Sprint(wantIndirect) {
		t.Errorf("edges %q, indirect %q; want %q, %q", edges, indirect, wantEdges, wantIndirect)
	}
}
