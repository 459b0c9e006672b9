calls = []


def range_push(msg):
    calls.append("push " + msg)
    return len(calls)


def range_pop():
    calls.append("pop")
    return 0
