"""tests/data/model-server.py PLAN LOG: a scripted model on 127.0.0.1 for the agent tests
(tests/suite/agents.rs), answering in each agent's wire format at once, so that a real agent CLI
does real work under isolate without a real model.

It listens on a port the kernel picks and prints that port, alone on a line, once it accepts.
PLAN is a JSON file: {"steps": [STEP, ...]}, where a STEP is {"write": PATH, "text": TEXT} (the
agent's own tool for writing a file where it offers one, else its shell) or {"run": COMMAND} (its
shell). A conversation's next step is the number of tool results it already holds; past the last
step the answer is the text "DONE". aider, which has no tools, is answered with the edit that
writes the first step's file (a whole-file or SEARCH/REPLACE block, as its system prompt asks),
and its commit messages with one line.

Every request is one JSON line in LOG: the path, the step it was at, what was answered, and the
last tool result the agent sent (cut), so that a failing test can show what the agent saw.

The wire formats: Anthropic Messages (`/v1/messages`, Claude Code), OpenAI Responses
(`/v1/responses`, Codex), OpenAI Chat Completions (`/v1/chat/completions`, opencode and aider
through litellm) and Gemini (`/v1beta/models/M:generateContent` and `:streamGenerateContent`,
Gemini CLI), each streamed when asked; `GET .../models` lists one model. Anything else is a 404,
logged.
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLAN = json.load(open(sys.argv[1]))["steps"]
LOG = sys.argv[2]
lock = threading.Lock()
counter = [0]


def new_id(prefix):
    with lock:
        counter[0] += 1
        return "%s_%06d" % (prefix, counter[0])


def log(entry):
    with lock, open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def cut(value, n=400):
    text = value if isinstance(value, str) else json.dumps(value)
    return text[:n]


def all_text(value):
    """Every string inside a request body, joined: where an agent states its working directory."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(all_text(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(all_text(v) for v in value.values())
    return ""


CWD_PATTERNS = [
    r"Working directory: (/\S+)",
    r"working directory: (/\S+)",
    r"Workspace Directories:\*\*\s*-\s*(/\S+)",
    r"<cwd>(/[^<]+)</cwd>",
]


def working_directory(body):
    text = all_text(body)
    for pattern in CWD_PATTERNS:
        m = re.search(pattern, text)
        if m:
            return m.group(1).rstrip(".")
    return None


def step_action(step_no, tools, body, write_tools):
    """What to answer at `step_no`: ("call", name, arguments) or ("text", TEXT).
    `write_tools` maps a write tool's name to a function (path, text) -> its arguments; a write
    step uses the first offered one, given the agent's working directory."""
    if step_no >= len(PLAN):
        return ("text", "DONE")
    step = PLAN[step_no]
    if "write" in step:
        cwd = working_directory(body)
        for name, make in write_tools:
            if name in tools and cwd:
                return ("call", name, make(cwd + "/" + step["write"], step["text"]))
        command = "printf %%s %s > %s" % (shell_quote(step["text"]), shell_quote(step["write"]))
    else:
        command = step["run"]
    return ("shell", command)


def shell_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


# ------------------------------------------------------------------ Anthropic Messages

def anthropic(body):
    messages = body.get("messages") or []
    tools = [t.get("name") for t in body.get("tools") or []]
    results = [b for m in messages if isinstance(m.get("content"), list)
               for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    last = cut(results[-1].get("content")) if results else None
    if "Bash" not in tools:
        # Claude Code's side requests (a title, a quota check): a plain answer.
        return ("text", "ok"), len(results), last
    action = step_action(len(results), tools, body,
                         [("Write", lambda p, t: {"file_path": p, "content": t})])
    if action[0] == "shell":
        action = ("call", "Bash", {"command": action[1], "description": "the scripted step"})
    return action, len(results), last


def anthropic_message(body, action):
    if action[0] == "call":
        content = [{"type": "tool_use", "id": new_id("toolu"), "name": action[1], "input": action[2]}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": action[1]}]
        stop = "end_turn"
    return {"id": new_id("msg"), "type": "message", "role": "assistant",
            "model": body.get("model", "claude-scripted"), "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10}}


def anthropic_events(message):
    start = dict(message, content=[], stop_reason=None)
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": dict(block, input={})}
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": 10}}
    yield "message_stop", {"type": "message_stop"}


# ------------------------------------------------------------------ OpenAI Responses

def responses(body):
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    tools = [t.get("name") or t.get("type") for t in body.get("tools") or []]
    results = [i for i in items if str(i.get("type", "")).endswith("call_output")]
    last = cut(results[-1].get("output")) if results else None
    action = step_action(len(results), tools, body, [])
    if action[0] == "shell":
        command = action[1]
        if "exec_command" in tools:
            action = ("call", "exec_command", {"cmd": command})
        elif "shell_command" in tools:
            action = ("call", "shell_command", {"command": command})
        elif "shell" in tools:
            action = ("call", "shell", {"command": ["bash", "-lc", command]})
        else:
            action = ("text", "no shell tool among " + ",".join(map(str, tools)))
    return action, len(results), last


def responses_events(body, action):
    rid = new_id("resp")
    if action[0] == "call":
        item = {"type": "function_call", "id": new_id("fc"), "call_id": new_id("call"),
                "name": action[1], "arguments": json.dumps(action[2]), "status": "completed"}
    else:
        item = {"type": "message", "id": new_id("msg"), "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": action[1], "annotations": []}]}
    response = {"id": rid, "object": "response", "model": body.get("model", "gpt-scripted"),
                "status": "in_progress", "output": []}
    yield {"type": "response.created", "response": response}
    yield {"type": "response.output_item.added", "output_index": 0, "item": item}
    yield {"type": "response.output_item.done", "output_index": 0, "item": item}
    done = dict(response, status="completed", output=[item], usage={
        "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20})
    yield {"type": "response.completed", "response": done}


# ------------------------------------------------------------------ OpenAI Chat Completions

def chat(body):
    messages = body.get("messages") or []
    if body.get("tools"):
        tools = [(t.get("function") or {}).get("name") for t in body["tools"]]
        results = [m for m in messages if m.get("role") == "tool"]
        last = cut(results[-1].get("content")) if results else None
        action = step_action(len(results), tools, body,
                             [("write", lambda p, t: {"filePath": p, "content": t})])
        if action[0] == "shell":
            action = ("call", "bash", {"command": action[1], "description": "the scripted step"})
        return action, len(results), last
    return ("text", aider_reply(messages)), 0, None


def aider_reply(messages):
    system = all_text([m.get("content") for m in messages if m.get("role") == "system"])
    if "commit message" in system.lower():
        return "add the scripted file"
    step = next((s for s in PLAN if "write" in s), {"write": "hello.txt", "text": "hello\n"})
    path, text = step["write"], step["text"].rstrip("\n")
    if "SEARCH" in system and "REPLACE" in system:
        return "%s\n```\n<<<<<<< SEARCH\n=======\n%s\n>>>>>>> REPLACE\n```\n" % (path, text)
    return "%s\n```\n%s\n```\n" % (path, text)


def chat_message(action):
    if action[0] == "call":
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": new_id("call"), "type": "function",
            "function": {"name": action[1], "arguments": json.dumps(action[2])}}]}
    return {"role": "assistant", "content": action[1]}


def chat_events(body, action):
    base = {"id": new_id("chatcmpl"), "object": "chat.completion.chunk", "created": 0,
            "model": body.get("model", "gpt-scripted")}
    message = chat_message(action)
    if action[0] == "call":
        call = dict(message["tool_calls"][0], index=0)
        delta, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": action[1]}, "stop"
    yield dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}])
    yield dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
               usage={"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20})


# ------------------------------------------------------------------ Gemini

def schema_value(schema):
    """The smallest value a JSON schema allows: Gemini CLI asks its router in JSON mode."""
    kind = str(schema.get("type", "string")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        return {k: schema_value(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    return "scripted"


def gemini(body):
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        return ("text", json.dumps(schema_value(schema))), 0, None
    contents = body.get("contents") or []
    tools = [f.get("name") for t in body.get("tools") or []
             for f in t.get("functionDeclarations") or []]
    results = [p["functionResponse"] for c in contents for p in c.get("parts") or []
               if "functionResponse" in p]
    last = cut(results[-1].get("response")) if results else None
    if "run_shell_command" not in tools:
        return ("text", "ok"), len(results), last
    action = step_action(len(results), tools, body,
                         [("write_file", lambda p, t: {"file_path": p, "content": t})])
    if action[0] == "shell":
        action = ("call", "run_shell_command",
                  {"command": action[1], "description": "the scripted step"})
    return action, len(results), last


def gemini_answer(action):
    part = {"functionCall": {"name": action[1], "args": action[2]}} if action[0] == "call" \
        else {"text": action[1]}
    return {"candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10,
                              "totalTokenCount": 20}}


# ------------------------------------------------------------------ HTTP

class Handler(BaseHTTPRequestHandler):
    # Each answer closes its connection: a stream needs no length.
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def answer(self, code, value):
        data = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def stream(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for event in events:
            self.wfile.write(event.encode())
            self.wfile.flush()

    def do_GET(self):
        path = self.path.split("?")[0]
        log({"method": "GET", "path": self.path})
        if path.endswith("/models"):
            return self.answer(200, {"object": "list", "data": [
                {"id": "scripted", "object": "model", "owned_by": "isolate-tests"}]})
        self.answer(404, {"error": {"message": "no such path", "type": "not_found"}})

    def do_POST(self):
        path = self.path.split("?")[0]
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        entry = {"method": "POST", "path": self.path}
        try:
            self.route(path, body, entry)
        except (BrokenPipeError, ConnectionResetError):
            entry["broken"] = True
        log(entry)

    def route(self, path, body, entry):
        if path.endswith("/count_tokens"):
            return self.answer(200, {"input_tokens": 10})
        if ":countTokens" in path:
            return self.answer(200, {"totalTokens": 10})
        if path.endswith("/messages"):
            action, entry["step"], entry["last_result"] = anthropic(body)
            entry["answer"] = cut(action, 200)
            message = anthropic_message(body, action)
            if body.get("stream"):
                return self.stream("event: %s\ndata: %s\n\n" % (name, json.dumps(data))
                                   for name, data in anthropic_events(message))
            return self.answer(200, message)
        if path.endswith("/responses"):
            action, entry["step"], entry["last_result"] = responses(body)
            entry["answer"] = cut(action, 200)
            return self.stream("event: %s\ndata: %s\n\n" % (e["type"], json.dumps(e))
                               for e in responses_events(body, action))
        if path.endswith("/chat/completions"):
            action, entry["step"], entry["last_result"] = chat(body)
            entry["answer"] = cut(action, 200)
            if body.get("stream"):
                events = ["data: %s\n\n" % json.dumps(e) for e in chat_events(body, action)]
                return self.stream(events + ["data: [DONE]\n\n"])
            return self.answer(200, {
                "id": new_id("chatcmpl"), "object": "chat.completion", "created": 0,
                "model": body.get("model", "gpt-scripted"),
                "choices": [{"index": 0, "message": chat_message(action),
                             "finish_reason": "tool_calls" if action[0] == "call" else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
        if ":generateContent" in path or ":streamGenerateContent" in path:
            action, entry["step"], entry["last_result"] = gemini(body)
            entry["answer"] = cut(action, 200)
            if ":stream" in path:
                return self.stream(["data: %s\r\n\r\n" % json.dumps(gemini_answer(action))])
            return self.answer(200, gemini_answer(action))
        entry["answer"] = 404
        self.answer(404, {"error": {"message": "no such path", "type": "not_found"}})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
