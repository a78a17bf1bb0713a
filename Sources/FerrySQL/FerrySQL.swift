// The SQL front end: tokenizer, parser, printer, analysis and rewriter for SQLite's dialect.
