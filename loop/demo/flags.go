package demo

import "github.com/rlktop/rlktop/tracer/flagtab"

// FlagTable is every flag of the built-in loop: name, kind, choices,
// live or restart, in display order. The backend flags (the Choice
// ones) come first, in the flags panel's order (digit keys 1–5). Parsing
// (Config.ParseFlag), Backends, Loop.Set's refusals and, in package loop,
// the flags panel, live switching and a comparison's plan derive from it.
var FlagTable = flagtab.Table{
	{Name: "attention", Kind: flagtab.Choice, Choices: []string{"math", "fused"}, Live: true},
	{Name: "qkv", Kind: flagtab.Choice, Choices: []string{"separate", "fused"}, Live: true},
	{Name: "scan", Kind: flagtab.Choice, Choices: []string{"serial", "sklansky"}, Live: true},
	{Name: "sampler", Kind: flagtab.Choice, Choices: []string{"multinomial", "gumbel"}, Live: true},
	{Name: "head", Kind: flagtab.Choice, Choices: []string{"materialized", "gatherdot"}, Live: true},
	{Name: "envs", Kind: flagtab.Int},
	{Name: "group", Kind: flagtab.Int},
	{Name: "layers", Kind: flagtab.Int},
	{Name: "width", Kind: flagtab.Int},
	{Name: "heads", Kind: flagtab.Int},
	{Name: "mlp", Kind: flagtab.Int},
	{Name: "head_dim", Kind: flagtab.Int},
	{Name: "max_plies", Kind: flagtab.Int},
	{Name: "seed", Kind: flagtab.Uint},
	{Name: "temperature", Kind: flagtab.Float, Live: true},
	{Name: "top_p", Kind: flagtab.Float, Live: true},
	{Name: "update_every", Kind: flagtab.Int},
	{Name: "update_batch", Kind: flagtab.Int},
	{Name: "lr", Kind: flagtab.Float, Live: true},
	{Name: "weight_decay", Kind: flagtab.Float, Live: true},
	{Name: "adv_floor", Kind: flagtab.Float, Live: true},
	{Name: "value_coef", Kind: flagtab.Float, Live: true},
}
