# An environment's own sitecustomize: the shim must still run it.
import os

os.environ["CHAINED_SITECUSTOMIZE_RAN"] = "1"
print("chained sitecustomize ran", flush=True)
