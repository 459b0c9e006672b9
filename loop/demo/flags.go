package demo

// FlagKind says how a built-in loop flag's text value is read
// (Config.ParseFlag).
type FlagKind int

const (
	FlagChoice FlagKind = iota // one of FlagDef.Choices
	FlagInt                    // a positive integer
	FlagFloat                  // a number ≥ 0 (temperature > 0, 0 < top_p ≤ 1)
	FlagUint                   // an unsigned integer (seed)
)

// FlagDef describes one flag of the built-in loop.
type FlagDef struct {
	Name string
	Kind FlagKind
	// Choices are a FlagChoice flag's values in the order they are
	// offered (the TUI's flags panel cycles through them).
	Choices []string
	// Live flags are applied by Loop.Set at the next step boundary (a
	// live switch, over rlktop's control channel); the others change
	// tensor shapes, the seed or the update schedule, so Loop.Set refuses
	// them with ErrNeedsRestart and rlktop restarts the child instead.
	Live bool
}

// FlagTable is every flag of the built-in loop: name, kind, choices,
// live or restart, in display order. The backend flags (the FlagChoice
// ones) come first, in the flags panel's order (digit keys 1–5). Parsing
// (Config.ParseFlag), Backends, Loop.Set's refusals and, in package loop,
// the flags panel, live switching and a comparison's plan derive from it.
var FlagTable = []FlagDef{
	{Name: "attention", Kind: FlagChoice, Choices: []string{"math", "fused"}, Live: true},
	{Name: "qkv", Kind: FlagChoice, Choices: []string{"separate", "fused"}, Live: true},
	{Name: "scan", Kind: FlagChoice, Choices: []string{"serial", "sklansky"}, Live: true},
	{Name: "sampler", Kind: FlagChoice, Choices: []string{"multinomial", "gumbel"}, Live: true},
	{Name: "head", Kind: FlagChoice, Choices: []string{"materialized", "gatherdot"}, Live: true},
	{Name: "envs", Kind: FlagInt},
	{Name: "group", Kind: FlagInt},
	{Name: "layers", Kind: FlagInt},
	{Name: "width", Kind: FlagInt},
	{Name: "heads", Kind: FlagInt},
	{Name: "mlp", Kind: FlagInt},
	{Name: "head_dim", Kind: FlagInt},
	{Name: "max_plies", Kind: FlagInt},
	{Name: "seed", Kind: FlagUint},
	{Name: "temperature", Kind: FlagFloat, Live: true},
	{Name: "top_p", Kind: FlagFloat, Live: true},
	{Name: "update_every", Kind: FlagInt},
	{Name: "update_batch", Kind: FlagInt},
	{Name: "lr", Kind: FlagFloat, Live: true},
	{Name: "weight_decay", Kind: FlagFloat, Live: true},
	{Name: "adv_floor", Kind: FlagFloat, Live: true},
	{Name: "value_coef", Kind: FlagFloat, Live: true},
}

// LookupFlag returns the FlagTable entry named name.
func LookupFlag(name string) (FlagDef, bool) {
	for _, d := range FlagTable {
		if d.Name == name {
			return d, true
		}
	}
	return FlagDef{}, false
}
