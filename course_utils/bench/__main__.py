from course_utils.bench.cli import main

raise SystemExit(main())
