from attn_lint.entry import main

main()
