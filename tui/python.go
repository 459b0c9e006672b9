package tui

// pyAsyncSize is the size of a Python profile (functions plus cells)
// from which the Python view builds a snapshot's function table or call
// tree on its own goroutine (views.Python.SetAsync), showing the rows it
// showed before until they come. BenchmarkPyFunctions
// (tracer/attrib) on a 2-core AMD machine: the table 0.67 ms at 2k
// functions (4k of size), 3.4 ms at 20k (40k), 23 ms at 100k (200k); the
// tree 1.6, 15 and 69 ms. At 20k functions the table in the frame makes
// the Python view's frame 7.8 ms (BenchmarkFrame) where the other views
// take 1.5 ms. Below the size (8k functions: between the 2k and 20k
// figures) the rows are made in the frame that shows the snapshot.
const pyAsyncSize = 16_000
