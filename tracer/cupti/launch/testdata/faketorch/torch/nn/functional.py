def scaled_dot_product_attention(q, k, v, **kwargs):
    from torch.cuda import nvtx

    nvtx.calls.append("sdpa")
    return q
