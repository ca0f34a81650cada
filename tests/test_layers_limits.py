"""The layer measures' sizes are settings, named in their refusals."""

from __future__ import annotations

import dataclasses

from assistant.dispatch import execute
from assistant.session import Session


def test_sentences_and_tokens_past_the_servers_limits_are_refused_naming_the_setting(hub):
    small = dataclasses.replace(hub.settings, layers_max_sentences=10, flow_max_tokens=6, rollout_max_tokens=8)
    for line in ("probe --sentences 20", "contextuality bank --sentences 11", "cka --sentences 50"):
        reply = execute(line, Session(), hub, small)
        assert not reply.ok and "ASSISTANT_LAYERS_MAX_SENTENCES" in reply.error and " to 10 (" in reply.error
    flow = execute("rollout The cat sat on the warm mat. --method flow", Session(), hub, small)
    assert not flow.ok and "ASSISTANT_FLOW_MAX_TOKENS" in flow.error and "at most 6 tokens" in flow.error
    plain = execute("rollout The cat sat on the warm mat.", Session(), hub, small)
    assert not plain.ok and "ASSISTANT_ROLLOUT_MAX_TOKENS" in plain.error
    assert execute("rollout The cat sat.", Session(), hub, small).ok  # 5 tokens: within both
    assert execute("cka --sentences 8", Session(), hub, small).ok
