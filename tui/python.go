package tui

// pyAsyncSize is the size of a Python profile (functions plus cells)
// from which the Python view builds a snapshot's function table or call
// tree on its own goroutine (views.Python.SetAsync), showing the rows it
// showed before until they come. BenchmarkPyFunctions
// (tracer/attrib): the table 0.14-0.27 ms at 2k functions (4k of size),
// 1.5-2.1 ms at 20k (40k), 9-13 ms at 100k (200k), against a 16 ms
// frame; the tree 0.9, 8.4 and 65 ms. Below the size the rows are made in
// the frame that shows the snapshot, as before.
const pyAsyncSize = 50_000
