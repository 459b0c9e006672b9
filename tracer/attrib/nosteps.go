package attrib

// NoStepsText says which steps rlktop looked for when a source has none:
// the rules of tracer/steps (step-like NVTX/roctx ranges, --step-range,
// ProfilerStep#N) and the steps of the built-in loop and the Python
// agent. The TUI's Steps view and `rlktop report --by step` show it.
const NoStepsText = "no steps found: rlktop looked for NVTX/roctx ranges named step, iteration, iter or train_step " +
	"(for a command it traces, rlktop run --step-range REGEX sets another), torch.profiler ProfilerStep#N ranges, " +
	"and steps marked by the built-in loop or rlktop.step() (or an optimizer step) in Python"
