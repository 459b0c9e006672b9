package livestate

// ArmPython is where one comparison arm's Python time went: the Python
// agent's stack samples of the arm's counted steps (attrib.PyProfile of
// them), per stage and its heaviest functions.
type ArmPython struct {
	Arm     string `json:"arm"`
	Samples int64  `json:"samples"`
	Steps   int64  `json:"steps"`
	// StepNs is the step thread's sampled time a step, ns.
	StepNs int64 `json:"step_thread_ns_per_step"`
	// PythonShare, TorchShare, WaitShare: the step thread's samples running
	// Python (bytecode or C calls outside torch), inside torch, waiting
	// (sleep, locks, queues, DataLoader).
	PythonShare float64          `json:"python_share"`
	TorchShare  float64          `json:"torch_share"`
	WaitShare   float64          `json:"wait_share"`
	Stages      []ArmPythonStage `json:"stages"`
	// Functions: the heaviest functions of the arm by self samples (at
	// most 5).
	Functions []ArmPythonFunc `json:"functions"`
}

// ArmPythonStage is one stage of an arm: the step thread's sampled time
// in it a step (ns) and the share of that running Python.
type ArmPythonStage struct {
	Stage       string  `json:"stage"`
	NsPerStep   int64   `json:"ns_per_step"`
	PythonShare float64 `json:"python_share"`
}

// ArmPythonFunc is one function of an arm: its self samples and their
// share of the arm's samples.
type ArmPythonFunc struct {
	Function    string  `json:"function"`
	Where       string  `json:"where"` // file:line (attrib.PyFunc.Where)
	SelfSamples int64   `json:"self_samples"`
	SelfShare   float64 `json:"self_share"`
}
