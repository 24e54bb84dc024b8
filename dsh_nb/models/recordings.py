"""Hand-written model responses, byte for byte as the services send them.

No real traffic can be recorded here, so these are written by hand from the
public API references, in the exact wire shapes, each with the API version
it follows. Tests replay them through the official SDKs (``Raw`` replies of
the replay server, or ``httpx2.MockTransport``), so a change in how an SDK
reads the wire shows up as a failing test, not as a surprise in a notebook.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ANTHROPIC_OVERLOADED",
    "ANTHROPIC_TOOL_USE_SSE",
    "DEEPSEEK_REASONER_SSE",
    "OPENAI_MODEL_NOT_FOUND",
    "OPENAI_TOOL_CALLS_JSON",
    "OPENAI_TOOL_CALLS_SSE",
]

#: OpenAI Chat Completions, ``chat.completion`` object (openai-python 3.x
#: types; ``service_tier``, ``annotations`` and ``*_tokens_details`` as of
#: the 2025 API reference): two parallel tool calls.
OPENAI_TOOL_CALLS_JSON: Final = """{
  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": null,
        "tool_calls": [
          {
            "id": "call_h3Jk8A",
            "type": "function",
            "function": {"name": "add", "arguments": "{\\"a\\":2,\\"b\\":3}"}
          },
          {
            "id": "call_p9Qw2Z",
            "type": "function",
            "function": {"name": "add", "arguments": "{\\"a\\":40,\\"b\\":2}"}
          }
        ],
        "refusal": null,
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "tool_calls"
    }
  ],
  "usage": {
    "prompt_tokens": 82,
    "completion_tokens": 51,
    "total_tokens": 133,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {
      "reasoning_tokens": 0,
      "audio_tokens": 0,
      "accepted_prediction_tokens": 0,
      "rejected_prediction_tokens": 0
    }
  },
  "service_tier": "default",
  "system_fingerprint": "fp_b3f1157249"
}"""

#: The same two calls streamed (``stream: true``, ``stream_options:
#: {"include_usage": true}``): arguments split mid-token, the usage in a
#: final chunk whose ``choices`` is empty, then ``[DONE]``.
OPENAI_TOOL_CALLS_SSE: Final = """\
data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_h3Jk8A","type":"function","function":{"name":"add","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"2,\\"b"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\":3}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_p9Qw2Z","type":"function","function":{"name":"add","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\\"a\\":40,"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\\"b\\":2}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-s1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_b3f1157249","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":51,"total_tokens":133,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

"""

#: DeepSeek ``deepseek-reasoner`` (thinking mode) streamed through its
#: OpenAI-compatible Chat Completions API: ``reasoning_content`` deltas
#: before the answer, DeepSeek's ``prompt_cache_hit_tokens`` /
#: ``prompt_cache_miss_tokens`` in usage.
DEEPSEEK_REASONER_SSE: Final = """\
data: {"id":"d1","object":"chat.completion.chunk","created":1741569952,"model":"deepseek-reasoner","system_fingerprint":"fp_7e0991cad4_prod0820_fp8_kvcache","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1741569952,"model":"deepseek-reasoner","system_fingerprint":"fp_7e0991cad4_prod0820_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"The user wants"},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1741569952,"model":"deepseek-reasoner","system_fingerprint":"fp_7e0991cad4_prod0820_fp8_kvcache","choices":[{"index":0,"delta":{"content":null,"reasoning_content":" a sum."},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1741569952,"model":"deepseek-reasoner","system_fingerprint":"fp_7e0991cad4_prod0820_fp8_kvcache","choices":[{"index":0,"delta":{"content":"2 + 3 = 5","reasoning_content":null},"logprobs":null,"finish_reason":null}]}

data: {"id":"d1","object":"chat.completion.chunk","created":1741569952,"model":"deepseek-reasoner","system_fingerprint":"fp_7e0991cad4_prod0820_fp8_kvcache","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":30,"total_tokens":50,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":22},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":20}}

data: [DONE]

"""

#: Anthropic Messages streaming (``anthropic-version: 2023-06-01`` event
#: names and shapes): a text block, then a ``tool_use`` block whose input
#: arrives as ``input_json_delta`` pieces.
ANTHROPIC_TOOL_USE_SSE: Final = """\
event: message_start
data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-sonnet-5","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}

event: ping
data: {"type": "ping"}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me add"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" those."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"add","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\": 2, \\"b"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\\": 3}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

"""

#: Chat Completions 404 for an unknown model.
OPENAI_MODEL_NOT_FOUND: Final = """{
  "error": {
    "message": "The model `gpt-9` does not exist or you do not have access to it.",
    "type": "invalid_request_error",
    "param": null,
    "code": "model_not_found"
  }
}"""

#: Messages API 529 (overloaded) error body.
ANTHROPIC_OVERLOADED: Final = """{
  "type": "error",
  "error": {"type": "overloaded_error", "message": "Overloaded"}
}"""
