"""The class tools: the students' commands (``course preflight``, ``course hand-in``), the instructor's reports
(``course class-report``, ``course progress``, ``course grading``) and the JupyterHub settings (``classroom.hub``)."""
