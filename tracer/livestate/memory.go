package livestate

// ArmMemory is one comparison arm's memory over its counted steps that
// have memory events (the Python agent's torch.profiler windows with
// profile_memory): what a flag flip does to the peak and the temporaries.
type ArmMemory struct {
	Arm   string `json:"arm"`
	Steps int    `json:"steps"` // counted steps with memory events
	// PeakAllocatedBytes, PeakReservedBytes: the median over those steps
	// of the step's peak (bytes), on the device with the highest.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	PeakReservedBytes  int64 `json:"peak_reserved_bytes"`
	// TempBytesPerStep: bytes of temporaries (allocated and freed inside
	// one step) per step, all devices.
	TempBytesPerStep int64 `json:"temp_bytes_per_step"`
	// Categories: the temporaries by the kernel category of the operator
	// that allocated them (its name and operator stack, the category
	// rules), largest first.
	Categories []ArmMemCategory `json:"categories"`
	// Temporaries: the arm's largest temporaries (at most 5).
	Temporaries []ArmMemTemp `json:"temporaries"`
}

// ArmMemCategory is one category's temporaries in an arm.
type ArmMemCategory struct {
	Category         string `json:"category"`
	TempBytesPerStep int64  `json:"temp_bytes_per_step"`
	LargestBytes     int64  `json:"largest_bytes"` // the largest single temporary
	LargestOperator  string `json:"largest_operator"`
}

// ArmMemTemp is a group of temporaries of one size (attrib.MemTemp).
type ArmMemTemp struct {
	Operator   string `json:"operator"`
	Stage      string `json:"stage"`
	Category   string `json:"category"`
	FreedBy    string `json:"freed_by"`
	Bytes      int64  `json:"bytes"`
	Count      int    `json:"count"`
	LifetimeNs int64  `json:"lifetime_ns"`
}
