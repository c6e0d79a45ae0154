from course_utils.data.cli import main

raise SystemExit(main())
