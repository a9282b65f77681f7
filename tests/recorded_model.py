"""A model server on loopback that answers every request with one recorded answer, for the
providers' tests: the vendors' real SDKs (anthropic, openai) speak real HTTP to it, as they
would to a local llama.cpp or vLLM server, and it keeps each request body to look at.

    with RecordedModel(answer_text) as model:
        model.url            # http://127.0.0.1:PORT (Anthropic base_url; OpenAI: + "/v1")
        model.requests       # [(path, body dict), ...]

Routes: POST /v1/chat/completions (OpenAI chat completions) and POST /v1/messages (Anthropic
Messages); anything else is a 404. `status` makes every answer an HTTP error instead.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RecordedModel:
    def __init__(self, answer: str, status: int = 200):
        self.answer = answer
        self.status = status
        self.requests: list[tuple[str, dict]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "RecordedModel":
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server interface)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                model.requests.append((self.path, body))
                if model.status != 200:
                    return self._send(model.status, {"error": {"type": "overloaded_error",
                                                               "message": "busy"}})
                if self.path.endswith("/chat/completions"):
                    return self._send(200, {
                        "id": "recorded", "object": "chat.completion", "created": 0,
                        "model": body.get("model"), "choices": [{
                            "index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": model.answer}}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                  "total_tokens": 2}})
                if self.path.endswith("/messages"):
                    return self._send(200, {
                        "id": "msg_recorded", "type": "message", "role": "assistant",
                        "model": body.get("model"), "stop_reason": "end_turn",
                        "stop_sequence": None, "content": [{"type": "text",
                                                             "text": model.answer}],
                        "usage": {"input_tokens": 1, "output_tokens": 1}})
                self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # quiet
                pass

        return Handler
