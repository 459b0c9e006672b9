package tracer

import "regexp"

// attentionOp matches the names of the operators that compute attention
// (scores, softmax and the weighted sum in one call): PyTorch's
// aten::scaled_dot_product_attention and the backends it dispatches to
// (aten::_scaled_dot_product_flash_attention, …_efficient_attention,
// …_cudnn_attention, …_flash_attention_for_cpu, aten::_flash_attention_forward,
// aten::_efficient_attention_forward: PyTorch 2.x native_functions.yaml;
// tracelens_h100_qwen15_sdpa_flash and tracelens_mi300_qwen15_aotriton in
// ../shared/traces), flash-attn's flash_attn_func / flash_attn::…
// operators, and the softmax of an attention written out by hand
// (aten::softmax, aten::_softmax: torch.nn.functional.softmax).
var attentionOp = regexp.MustCompile(`(?i)scaled_dot_product|_flash_attention|_efficient_attention|_cudnn_attention|flash_attn|(^|[^a-z_])_?softmax$`)

// IsAttentionOp reports whether an operator named name computes attention
// (see attentionOp); the Linker's Context.AfterAttention is about these.
func IsAttentionOp(name string) bool { return attentionOp.MatchString(name) }
