package loop

// DemoChildCommand is the hidden subcommand of the rlktop binary that runs
// the built-in loop (loop/demo.RunChild) as the traced child process.
const DemoChildCommand = "__demo-child"
