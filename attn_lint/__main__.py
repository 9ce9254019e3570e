from attn_lint.linter.cli import main

main()
