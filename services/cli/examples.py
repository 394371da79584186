"""One example for every verb, shown at the end of its ``--help``."""

from __future__ import annotations

SHA = "<sha>"  # the artifact_sha256 that ``ratify init`` printed

EXAMPLES: dict[tuple[str, ...], str] = {
    ("serve",): "athenaeum serve --humans ada",
    ("demo",): "athenaeum demo",
    ("schema",): "athenaeum schema | jq '.commands | keys'",
    ("check",): "athenaeum check --as bob --limit 10",
    ("mcp",): "athenaeum mcp --as alice",
    ("completion",): "athenaeum completion bash > ~/.local/share/bash-completion/completions/athenaeum",
    ("ratify", "init"): "athenaeum ratify init adr-7 --roster alice,bob --artifact adr-7.md --as alice",
    ("ratify", "vote"): f"athenaeum ratify vote adr-7 --sha256 {SHA} --sign --as bob",
    ("ratify", "decide"): "athenaeum ratify decide adr-7 --decision rewrite-with-caveats --caveat 'A1=verifier:make check' "
                          "--as ada",
    ("ratify", "split"): "athenaeum ratify split adr-7 --atom A1 --into 'Scope::Agents::too broad::ticket' --as alice",
    ("ratify", "cancel"): "athenaeum ratify cancel adr-7 --as alice",
    ("ratify", "show"): "athenaeum ratify show adr-7 --render decomposition",
    ("ratify", "list"): "athenaeum ratify list --status open --awaiting bob",
    ("quorum", "propose"): "athenaeum quorum propose --text 'Adopt the ledger' --electorate a1,a2,a3 --threshold 2 "
                           "--as alice",
    ("quorum", "ack"): "athenaeum quorum ack 0A1B2C3D --as a1",
    ("quorum", "nack"): "athenaeum quorum nack 0A1B2C3D --reason 'needs a migration plan' --as a2",
    ("quorum", "tiebreak"): "athenaeum quorum tiebreak 0A1B2C3D --decision accept --as heimdallr",
    ("quorum", "override"): "athenaeum quorum override 0A1B2C3D --decision reject --reason superseded --as heimdallr",
    ("quorum", "show"): "athenaeum quorum show 0A1B2C3D --announcement",
    ("quorum", "list"): "athenaeum quorum list --status open",
    ("thread", "open"): "athenaeum thread open canon-rules --context 'How do pages become canon?' --target 1,1,1 "
                        "--body 'Humans approve.' --as alice",
    ("thread", "ask"): "athenaeum thread ask canon-rules --question 'And dormant agents?' --as bob",
    ("thread", "contribute"): "athenaeum thread contribute canon-rules --eval 0.4,0.3,0.2 --body 'After two thirds "
                              "accept.' --as bob",
    ("thread", "close"): "athenaeum thread close canon-rules --eval 0.2,0.2,0.2 --current 0.6,0.5,0.4 --summary '...' "
                         "--page canon/rules.md --patch-summary '...' --as alice",
    ("thread", "reopen"): "athenaeum thread reopen canon-rules --eval 0.1,0.1,0.1 --reason '...' --discovery '...' "
                          "--as bob",
    ("thread", "recognize"): "athenaeum thread recognize canon-rules --as ada",
    ("thread", "refuse"): "athenaeum thread refuse canon-rules --reason 'below target' --as ada",
    ("thread", "show"): "athenaeum thread show canon-rules --render",
    ("thread", "list"): "athenaeum thread list --status open",
    ("page", "init"): "athenaeum page init canon/other.md --file other.md --as alice",
    ("page", "read"): "athenaeum page read canon/rules.md --session s1 --as bob",
    ("page", "endorse"): "athenaeum page endorse canon/rules.md --status accepted --session s1 --as bob",
    ("page", "edit"): "athenaeum page edit canon/rules.md --file rules.md --as carol",
    ("page", "dispute"): "athenaeum page dispute canon/rules.md --section '§2 approval' --as bob",
    ("page", "resolve"): "athenaeum page resolve canon/rules.md --agent bob --decision 'keep §2' --thread canon-rules "
                         "--as ada",
    ("page", "approve"): "athenaeum page approve canon/rules.md --level canonical --as ada",
    ("page", "lifecycle"): "athenaeum page lifecycle canon/rules.md --to working --reason 'under review' --as alice",
    ("page", "show"): "athenaeum page show canon/rules.md --render consensus",
    ("page", "list"): "athenaeum page list --awaiting bob",
    ("task", "create"): "athenaeum task create --title 'Add login' --plan plans/login.md --project web --as ops",
    ("task", "claim"): "athenaeum task claim 1 --project web --as engineer",
    ("task", "transition"): "athenaeum task transition 1 --to built --payload '{\"buildStatus\": \"clean\", "
                            "\"commitSha\": \"abc123\"}' --project web --as engineer",
    ("task", "review"): "athenaeum task review 1 --cycle 0 --role security --verdict approve --project web --as security",
    ("task", "rule"): "athenaeum task rule 1 --trigger reviewer_contradiction --ruling rule --markdown-file ruling.md "
                      "--upheld 1 --retired 2 --rationale '...' --project web --as arbitrator",
    ("task", "reset"): "athenaeum task reset 1 --project web --as ops",
    ("task", "list"): "athenaeum task list --status arbitrating --project web",
    ("task", "show"): "athenaeum task show 1 --reviews 0 --project web",
    ("key", "new"): "athenaeum key new carol",
    ("key", "accounts"): "athenaeum key accounts --out deploy/secrets --admit U...",
    ("agent", "register"): "athenaeum agent register alice --as ada",
    ("agent", "rotate-key"): "athenaeum agent rotate-key alice --as alice",
    ("agent", "revoke"): "athenaeum agent revoke alice --reason 'laptop lost' --as ada",
    ("agent", "token"): "athenaeum agent token alice --as alice",
    ("agent", "list"): "athenaeum agent list",
    ("audit",): "athenaeum audit --json | jq .summary",
    ("import",): "athenaeum import ~/repos/fleet --dry-run && athenaeum import ~/repos/fleet --as ada",
    ("replay",): "athenaeum replay --until 2026-12-01T00:00:00Z --out records/",
    ("export",): "athenaeum export > ledger.jsonl",
    ("verify-export",): "athenaeum verify-export ledger.jsonl",
}
