"""Every place the grader reaches into a library's private parts, and nothing else.

The grader needs a few things jupyter_client, nbclient, nbgrader and nbconvert offer no public
way to change: a kernel's messages bounded on the socket, a timeout that fails fast, nbgrader's
per-notebook set-up done once a process, a feedback page rendered in one pass. Each such
override, replacement or call of a private name lives here, and is listed in ``PRIVATE``: the
module and name relied on, how (overridden in a subclass, called, replaced on the library's
module, or a behaviour its source must still show), the signature it had when the code was
written against the version named, and why. ``tests/.../test_private_names.py`` reads the
table and fails when a name is gone or its signature changed: the place to look after
upgrading one of these libraries (``grader/pyproject.toml`` pins them).

A private name is relied on only where no public one serves, and each entry's ``why`` says
why; one that would only save time is done with public names or not at all
(``tests/grader/test_private_names.py`` holds the table to at most eight). Where a library
has a documented extension point the grader uses it instead, outside this module: a grading
kernel is launched, waited for (a killed one too: the kernel manager's own look is ten times
a second) and cleaned up by a kernel provisioner (``kernel/start.py``'s
``GradingProvisioner``, jupyter_client's ``LocalProvisioner``); its printed output is
bounded by an ipykernel ``outstream_class`` (``sandbox/inside/streams.py``, which runs
inside the sandbox and cannot import this module: its names are in the table all the same).
What a provisioner cannot do is here, and says why.

The rest of the grader subclasses this module's classes and calls its functions; none of it
names a private attribute of a library.
"""
from __future__ import annotations

import importlib
import inspect
import json
import time
import uuid
from dataclasses import dataclass
from queue import Empty

import zmq
from jupyter_client import protocol_version_info
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from nbclient.util import ensure_async
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbgrader.preprocessors import Execute

# what the code here was written and last checked against (grader/pyproject.toml's pins)
JUPYTER_CLIENT = "jupyter_client 8.10.0"
NBCLIENT = "nbclient 0.11.0"
NBGRADER = "nbgrader 0.9.6"
NBCONVERT = "nbconvert 7.17.2"
IPYKERNEL = "ipykernel 7.4.0"
JSONSCHEMA = "jsonschema 4.24.1"


@dataclass(frozen=True)
class Private:
    module: str             # the library module that defines (or holds) it
    name: str               # its qualified name there: "KernelManager._async_wait"
    # overridden in a subclass here | called from here | replaced on its module (``needs``:
    # how the module uses it) | behaviour of its code relied on (``needs``: its source)
    how: str
    signature: str | None   # str(inspect.signature(...)) as written against; None: not checked
    against: str            # the library version the code was written against
    why: str
    needs: tuple[str, ...] = ()   # text its source must still hold (a behaviour relied on)


PRIVATE: tuple[Private, ...] = (
    # -- jupyter_client: the kernel's messages, bounded on the socket ---------------------------
    Private("jupyter_client.channels", "AsyncZMQSocketChannel._recv", "overridden",
            "(self, **kwargs: Any) -> Dict[str, Any]", JUPYTER_CLIENT,
            "a message larger than the grader reads is kept to its header, never deserialised: "
            "the channel is the only place that sees its frames before they are parsed (a "
            "provisioner launches the kernel, it never sees a message)"),
    Private("jupyter_client.asynchronous.client", "AsyncKernelClient.wait_for_ready",
            "overridden", "(self, timeout: float | None = None) -> None", JUPYTER_CLIENT,
            "public; jupyter_client's own without its 0.2 s idle wait, done as its own does "
            "with public names (the kernel's protocol version adopted, a dead kernel seen at "
            "once): its source must still do those two",
            needs=("self._handle_kernel_info_reply(msg)", "if not await self._async_is_alive()")),
    # -- jupyter_client: the kernel manager ------------------------------------------------------
    Private("jupyter_client.manager", "KernelManager._async_pre_start_kernel", "behaviour",
            None, JUPYTER_CLIENT,
            "a provisioner set on the kernel manager before start_kernel is kept: the way a "
            "grading kernel gets its provisioner, made for its submission (limits, sandbox, "
            "warm server). The public way, an entry point named by a kernel spec, makes it "
            "from the spec alone, and needs both installed",
            needs=("if self.provisioner is None",)),
    Private("jupyter_client.manager", "KernelManager._async_cleanup_resources", "behaviour",
            None, JUPYTER_CLIENT,
            "every cleanup of a kernel, nbclient's of a dead one included, reaches the "
            "provisioner's cleanup (which reports the kernel's exit and removes its folder); "
            "no public name says when a kernel's resources are released",
            needs=("self.provisioner.cleanup(restart=restart)",)),
    Private("jupyter_client.provisioning.local_provisioner", "LocalProvisioner.launch_kernel",
            "overridden", "(self, cmd: list[str], **kwargs: Any) -> "
            "jupyter_client.connect.KernelConnectionInfo", JUPYTER_CLIENT,
            "public (the documented extension point); a kernel forked by the warm-kernel "
            "server is handed to the provisioner through its process, pid, pgid and cwd, the "
            "attributes its own launch_kernel sets",
            needs=("self.process = ", "self.pid = ", "self.pgid = ", "self.cwd = ")),
    # -- nbclient (through nbgrader's Execute): a cell's output and its timeout ---------------
    Private("nbclient.client", "NotebookClient._async_poll_for_reply", "overridden",
            "(self, msg_id: 'str', cell: 'NotebookNode', timeout: 'int | None', "
            "task_poll_output_msg: 'asyncio.Future[t.Any]', "
            "task_poll_kernel_alive: 'asyncio.Future[t.Any]') -> 'dict[str, t.Any]'", NBCLIENT,
            "the only place that knows a cell's output was cut short (its task cancelled) "
            "while grading goes on (raise_on_iopub_timeout off); nbclient's hooks (on_cell_*) "
            "are not told"),
    Private("nbclient.client", "NotebookClient._async_handle_timeout", "overridden",
            "(self, timeout: 'int', cell: 'NotebookNode | None' = None) -> "
            "'None | dict[str, t.Any]'", NBCLIENT,
            "after the interrupt, a kernel that does not stop fails the submission at once; "
            "nbgrader would wait out every later cell's timeout (interrupt_on_timeout and "
            "on_cell_error come after the cell, not after the interrupt)"),
    # -- nbgrader: set-up work done once a process ----------------------------------------------
    Private("nbgrader.api", "get_alembic_version", "replaced", "() -> str", NBGRADER,
            "it runs the `alembic` program for every new gradebook (a second); the same answer "
            "is read once a process (course.alembic_head). nbgrader has no setting for it, "
            "and Gradebook calls it from its constructor",
            needs=("alembic_version = get_alembic_version()",)),
    Private("nbgrader.api", "create_engine", "replaced",
            "(url: 'Union[str, _url.URL]', **kwargs: 'Any') -> 'Engine'", NBGRADER,
            "one SQLAlchemy engine per gradebook and process (course._engine): nbgrader makes "
            "one per Gradebook, and compiles its statements again each time (a sixth of a "
            "grading process's Python time); Gradebook takes a URL, never an engine",
            needs=("self.engine = create_engine(",)),
    Private("nbgrader.nbgraderformat.common", "jsonschema", "replaced", None, NBGRADER,
            "its one use, jsonschema.validate, builds a validator from the schema on every "
            "graded cell (1.4 ms a cell, 0.09 ms kept); course._check_nbgrader_metadata keeps "
            "one per schema. nbgrader's validator takes no validator of its own",
            needs=("jsonschema.validate(cell.metadata['nbgrader'], self.schema)",)),
    Private("jsonschema", "validate", "called", "(instance, schema, cls=None, *args, **kwargs)",
            JSONSCHEMA, "public; what nbgrader calls, and so what its replacement must accept"),
    # -- nbconvert: the feedback page ---------------------------------------------------------
    Private("nbconvert.exporters.html", "HTMLExporter.from_notebook_node", "overridden",
            "(self, nb: nbformat.notebooknode.NotebookNode, resources: "
            "Optional[dict[str, Any]] = None, **kw: Any) -> tuple[str, dict[str, typing.Any]]",
            NBCONVERT,
            "public; HTMLExporter's own without its last step (a BeautifulSoup pass over the "
            "whole page: 1.0 s a page of lesson 02 with it, 0.25 s without), its two filters "
            "made as 7.17.2's makes them, from public names",
            needs=('self.register_filter("highlight_code", highlight_code)',
                   'self.register_filter("filter_data_type", filter_data_type)',
                   "super().from_notebook_node(nb, resources, **kw)", "BeautifulSoup(html")),
    Private("nbconvert.filters.widgetsdatatypefilter", "WidgetsDataTypeFilter.__init__",
            "behaviour", None, NBCONVERT,
            "public; the notebook's metadata is looked up in its metadata attribute under its "
            "notebook_path",
            needs=("self.metadata = notebook_metadata", "self.notebook_path = os.path.join(")),
    Private("nbconvert.exporters.templateexporter", "TemplateExporter.from_notebook_node",
            "called", "(self, nb: 'NotebookNode', resources: 'dict[str, t.Any] | None' = None, "
            "**kw: 't.Any') -> 'tuple[str, dict[str, t.Any]]'", NBCONVERT,
            "public; what HTMLExporter.from_notebook_node ends with, before its last step"),
    # -- ipykernel (sandbox/inside/streams.py, inside the kernel: it cannot import this) ------
    Private("ipykernel.iostream", "OutStream.write", "overridden",
            "(self, string: str) -> int | None", IPYKERNEL,
            "public (--IPKernelApp.outstream_class); printed output cut at the source, so that "
            "it reaches the grader in small messages"),
    Private("ipykernel.iostream", "OutStream.flush", "called", "(self)", IPYKERNEL,
            "public; what the bounded stream sends every CHUNK characters"),
)


def resolve(entry: Private):
    """The library's own object an entry names (the original, where this module replaced it):
    ImportError or AttributeError when it is gone."""
    key = (entry.module, entry.name)
    if key in _originals:
        return _originals[key]
    found = importlib.import_module(entry.module)
    for part in entry.name.split("."):
        found = getattr(found, part)
    return found


def problems() -> list[str]:
    """What of PRIVATE no longer holds here: a name gone, a signature changed, a behaviour
    whose source no longer says it. [] when all is as written against."""
    found = []
    for entry in PRIVATE:
        where = f"{entry.module}.{entry.name} ({entry.how}; written against {entry.against})"
        try:
            obj = resolve(entry)
        except (ImportError, AttributeError) as error:
            found.append(f"{where}: gone ({error})")
            continue
        if entry.signature is not None:
            try:
                now = str(inspect.signature(obj))
            except (TypeError, ValueError) as error:
                now = f"no signature ({error})"
            if now != entry.signature:
                found.append(f"{where}: signature {now} (was {entry.signature})")
        if entry.needs:
            try:
                source = _source(entry, obj)
            except (OSError, TypeError) as error:
                found.append(f"{where}: no source to check ({error})")
                continue
            for text in entry.needs:
                if text not in source:
                    found.append(f"{where}: its source no longer holds {text!r}")
    return found


def _source(entry: Private, obj) -> str:
    """The library's source that ``entry.needs`` is looked for in: for a name replaced on a
    module, the module (how it uses the name); else the definition, as the library's file has
    it (whatever a test or another package put in its place at run time)."""
    import ast

    module = importlib.import_module(entry.module)
    text = inspect.getsource(module)
    if entry.how == "replaced":
        return text
    path = entry.name.split(".")
    nodes = ast.parse(text).body
    found = None
    for part in path:
        found = next((n for n in nodes if isinstance(
            n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == part), None)
        if found is None:
            return inspect.getsource(obj)
        nodes = found.body
    return ast.get_source_segment(text, found) or ""


# -- jupyter_client ------------------------------------------------------------------------

class HeaderOnlyChannel(AsyncZMQSocketChannel):
    """A channel that reads a message larger than ``max_bytes`` no further than its header:
    it comes back as a message of type ``dropped_type`` whose content is its original type and
    size. (jupyter_client 8.10.0: ``_recv`` receives and deserialises one message.)"""

    max_bytes: int = 4 * 1024**2
    dropped_type: str = "dropped"

    async def _recv(self, **kwargs):
        frames = await self.socket.recv_multipart(copy=False)
        if sum(len(f) for f in frames) <= self.max_bytes:
            _, parts = self.session.feed_identities([f.bytes for f in frames], copy=True)
            return self.session.deserialize(parts)
        size = sum(len(f) for f in frames)
        _, parts = self.session.feed_identities(frames, copy=False)
        try:        # [signature, header, parent_header, ...]: only the two small ones are read
            header, parent = (json.loads(bytes(parts[i].bytes)) for i in (1, 2))
        except (IndexError, ValueError):
            header, parent = {}, {}
        return {"header": header, "parent_header": parent, "msg_type": self.dropped_type,
                "msg_id": header.get("msg_id"), "metadata": {}, "buffers": [],
                "content": {"type": header.get("msg_type"), "size": size}}


class BoundedClient(AsyncKernelClient):
    """jupyter_client's client whose sockets receive no message larger than ``max_received``
    (ZeroMQ drops it, and the connection with it, which it then makes again), and that does
    not wait a fifth of a second at every kernel's start. (jupyter_client 8.10.0.)"""

    max_received: int = 64 * 1024**2

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # ZeroMQ's MAXMSGSIZE must be set on a socket before it connects: set on the client's
        # context (pyzmq's Context.setsockopt), it is set on every socket the context makes
        # after, the channels' among them. (jupyter_client 8.10.0 gives each client a context
        # of its own; the kernel manager hands it none.)
        self.context.setsockopt(zmq.MAXMSGSIZE, self.max_received)

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        # jupyter_client's own waits 0.2 s after the kernel_info handshake for more startup
        # messages, with both processes idle; nbclient matches every message to its request
        # anyway, so what startup sent is drained without waiting for more
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                msg = await ensure_async(self.shell_channel.get_msg(timeout=1))
            except Empty:
                pass
            else:
                if msg["msg_type"] == "kernel_info_reply":
                    try:      # IOPub is connected once the reply's status message arrives
                        await ensure_async(self.iopub_channel.get_msg(timeout=1))
                    except Empty:
                        pass
                    else:
                        # (as jupyter_client's own: speak the kernel's protocol version)
                        adapt = int(msg["content"]["protocol_version"].split(".")[0])
                        if adapt != protocol_version_info[0]:
                            self.session.adapt_version = adapt
                        break
            if not await self.is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")
        while True:
            try:
                await ensure_async(self.iopub_channel.get_msg(timeout=0))
            except Empty:
                return


class ProvisionedKernelManager(AsyncKernelManager):
    """jupyter_client's kernel manager, with the provisioner ``make_provisioner`` gives (set
    before the start, which jupyter_client keeps: no entry point, no kernel.json)."""

    def make_provisioner(self):
        raise NotImplementedError

    async def start_kernel(self, **kw):
        if self.provisioner is None:
            # (jupyter_client 8.10.0 names the kernel in _async_pre_start_kernel, after its
            # provisioner would have been made: named here first, the same way)
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", None) or str(uuid.uuid4())
            self.provisioner = self.make_provisioner()
        return await super().start_kernel(**kw)


# -- nbclient, through nbgrader's Execute ----------------------------------------------------

class ExecuteHooks(Execute):
    """nbgrader's Execute, telling its subclass when a cell's output was cut short
    (``output_lost``) and when a cell past its timeout has been interrupted
    (``interrupted``). (nbclient 0.11.0.)"""

    def output_lost(self, cell) -> None:
        """The end of ``cell``'s output never came (its messages were lost)."""

    async def interrupted(self, timeout, cell) -> None:
        """``cell`` ran past ``timeout`` and has been sent the interrupt: raise to fail."""

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg,
                                    task_poll_kernel_alive):
        reply = await super()._async_poll_for_reply(msg_id, cell, timeout, task_poll_output_msg,
                                                    task_poll_kernel_alive)
        if task_poll_output_msg.cancelled():    # the end of its output never came
            self.output_lost(cell)
        return reply

    async def _async_handle_timeout(self, timeout, cell=None):
        reply = await super()._async_handle_timeout(timeout, cell)
        await self.interrupted(timeout, cell)
        return reply


# -- nbgrader: set-up work done once a process -----------------------------------------------

_originals: dict[tuple[str, str], object] = {}


def _replace(module, name: str, value) -> None:
    key = (module.__name__, name)
    if key not in _originals:
        _originals[key] = getattr(module, name)
    setattr(module, name, value)


def replace_alembic_version(get_alembic_version) -> None:
    """nbgrader.api's get_alembic_version (nbgrader 0.9.6: runs `alembic heads`)."""
    import nbgrader.api

    _replace(nbgrader.api, "get_alembic_version", get_alembic_version)


def replace_create_engine(create_engine) -> None:
    """nbgrader.api's create_engine (nbgrader 0.9.6: SQLAlchemy's, imported by name)."""
    import nbgrader.api

    _replace(nbgrader.api, "create_engine", create_engine)


def replace_metadata_validate(validate) -> None:
    """What nbgrader's cell metadata validator calls as jsonschema.validate (nbgrader 0.9.6:
    common.py's one use of the module)."""
    import types

    from nbgrader.nbgraderformat import common

    _replace(common, "jsonschema", types.SimpleNamespace(validate=validate))


# -- nbconvert: the feedback page ----------------------------------------------------------

class OnePassHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter without the pass over the finished page it makes last, its
    Jinja environment given ``template_bytecode`` (a jinja2 BytecodeCache) and its code
    highlighted by ``highlighter(lexer)``. (nbconvert 7.17.2.)"""

    template_bytecode = None

    def highlighter(self, lexer):
        return Highlight2HTML(pygments_lexer=lexer, parent=self)

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter's own, but for its last step: it parses the whole page again with
        # BeautifulSoup to give images without alt text one and to make the cells of the lab
        # template focusable (0.25 s a page of lesson 02 without it, 1.0 s with it). Its
        # filters are made here as it makes them, from public names: the widgets filter
        # finds the notebook's metadata under the name it looks it up by (HTMLExporter hands
        # it the exporter's record of the notebooks it converted)
        if self.template_bytecode is not None:      # (before a template is loaded)
            self.environment.bytecode_cache = self.template_bytecode
        info = nb.metadata.get("language_info", {})
        lexer = info.get("pygments_lexer", info.get("name", None))
        self.register_filter("highlight_code", self.filters.get(
            "highlight_code", self.highlighter(lexer)))
        widgets = WidgetsDataTypeFilter(notebook_metadata={}, parent=self, resources=resources)
        widgets.metadata[widgets.notebook_path] = nb.metadata
        self.register_filter("filter_data_type", widgets)
        return TemplateExporter.from_notebook_node(self, nb, resources, **kw)
