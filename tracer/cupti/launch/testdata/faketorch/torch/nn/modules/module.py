_pre = []
_post = []


def register_module_forward_pre_hook(hook):
    _pre.append(hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    _post.append((hook, always_call))


class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(prefix + "." + name if prefix else name)

    def __call__(self, *args):
        for h in _pre:
            h(self, args)
        ok = False
        try:
            out = self.forward(*args)
            ok = True
        finally:
            for h, always in _post:
                if ok or always:
                    h(self, args, None)
        return out
