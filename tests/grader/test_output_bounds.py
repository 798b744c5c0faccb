"""The bounds on what a kernel's messages may hold still bite, on the grader's own channels
(``kernel/start.py``'s BoundedChannel and GradingKernelClient, ``patches.py``'s overrides of
jupyter_client): a message past MAX_MESSAGE is read no further than its header (it arrives as
DROPPED, with its type and size), one past MAX_RECEIVED is never received, and a message under
the bounds arrives whole. A fake kernel's socket sends them, in a second.

End to end, with a real kernel in the sandbox: tests/grader/test_hostile.py's
test_an_output_flood_is_dropped_as_it_arrives (25 images of 24 MB each, dropped as they arrive)
and tests/grader/test_robustness.py's test_huge_output_is_cut_before_it_reaches_the_autograded_
notebook (printed output, cut)."""
import asyncio
from queue import Empty

import zmq
import zmq.asyncio
from jupyter_client.session import Session

from autograd_lab_grader.kernel import start as kernel


async def _exchange(sizes: list[int]) -> list:
    """A fake kernel's shell socket (a ROUTER) answers the client's request with one message
    of each size (bytes of text in its content); what the client's shell channel reads of
    each (None: nothing within a second)."""
    context = zmq.Context()
    router = context.socket(zmq.ROUTER)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    session = Session(key=b"secret")
    client = kernel.GradingKernelClient(session=Session(key=b"secret"),
                                        context=zmq.asyncio.Context(), ip="127.0.0.1",
                                        transport="tcp", shell_port=port)
    client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
    try:
        request = client.kernel_info()
        identity = router.recv_multipart()[0]
        found = []
        for size in sizes:
            session.send(router, "execute_result", {"data": {"text/plain": "x" * size}},
                         parent={"msg_id": request, "msg_type": "kernel_info_request"},
                         ident=[identity])
            try:
                found.append(await client.shell_channel.get_msg(timeout=1))
            except Empty:
                found.append(None)
        return found
    finally:
        client.stop_channels()
        router.close(linger=0)
        context.term()


def test_a_message_past_the_bounds_is_cut_to_its_header_or_never_received():
    small, large, huge = 1000, kernel.MAX_MESSAGE + 1, kernel.MAX_RECEIVED + 1
    read_small, read_large, read_huge = asyncio.run(_exchange([small, large, huge]))
    assert read_small["msg_type"] == "execute_result"
    assert read_small["content"]["data"]["text/plain"] == "x" * small
    assert read_large["msg_type"] == kernel.DROPPED
    assert read_large["content"]["type"] == "execute_result"
    assert read_large["content"]["size"] > kernel.MAX_MESSAGE
    assert read_large["parent_header"]["msg_type"] == "kernel_info_request"
    assert "data" not in read_large["content"]
    assert read_huge is None        # ZeroMQ dropped it (and the connection with it)
