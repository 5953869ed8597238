"""Test support: a stub LLM server the real agent CLIs can be pointed at.

``StubLLMServer`` speaks the Anthropic Messages, OpenAI Responses / Chat
Completions and Gemini ``generateContent`` wire formats on 127.0.0.1 and
answers from a :class:`Script`. See ``docs/stub-server.md``.
"""

from phasegate.testing.request_log import LoggedRequest
from phasegate.testing.script import (
    PROVIDERS,
    ErrorReply,
    Handler,
    Match,
    Reply,
    Rule,
    Script,
    ScriptError,
    ToolCall,
    Usage,
    load_script,
)
from phasegate.testing.server import StubLLMServer

__all__ = [
    "PROVIDERS",
    "ErrorReply",
    "Handler",
    "LoggedRequest",
    "Match",
    "Reply",
    "Rule",
    "Script",
    "ScriptError",
    "StubLLMServer",
    "ToolCall",
    "Usage",
    "load_script",
]
