"""A declared flag that adds Python work to each step (python_torch_test.go).

Each step runs light() in stage env_step; with heavy=yes also work(),
about three times as long. rlktop compare --flag heavy=no,yes: the
heavy=no arm never calls work().
"""
import rlktop

heavy = rlktop.flag("heavy", "no", ["no", "yes"])


def work(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def light(n):
    x = 0
    for i in range(n):
        x += i
    return x


for step in range(100000):
    with rlktop.stage("env_step"):
        if heavy.value == "yes":
            work(1200000)
        light(400000)
    rlktop.step()
