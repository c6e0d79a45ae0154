/* The website's "Check your machine" page (tools/course_tools/site/doctor_page.py builds it).
 *
 * Loads Pyodide from this site, unpacks the course's doctor (course_doctor.zip) and, on "Check", runs
 * `course doctor` on what was pasted (course_doctor_page.answer). This file only shows the doctor's JSON as HTML:
 * every rule, message and command comes from the doctor. Nothing pasted leaves the page.
 *
 * window.courseDoctor tells a test (and a curious reader) where the page is: ready, readyMs (interpreter loaded and
 * doctor imported), answerMs and answerTimes (the last answer's time, every answer's), answers (how many), error (why it
 * could not load).
 */
(function () {
  "use strict";
  const root = document.getElementById("course-doctor");
  if (!root) {
    return;
  }
  const base = root.dataset.base;
  const words = JSON.parse(document.getElementById("course-doctor-words").textContent);
  const state = { ready: false, readyMs: null, answerMs: null, answerTimes: [], answers: 0, error: null };
  window.courseDoctor = state;
  let pyodide = null;
  let page = null; // the Python module course_doctor_page
  const SEVERITIES = ["error", "warning", "info"];

  function byId(id) {
    return document.getElementById(id);
  }

  // An element with attributes and children (strings become text: nothing pasted is read as HTML).
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      node.setAttribute(name, value);
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  // The doctor's sentences mark commands with `backticks`: those become <code>.
  function inline(text) {
    return String(text || "").split("`").map((part, i) => (i % 2 ? el("code", {}, part) : part));
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? values[name] : whole));
  }

  function status(text, kind) {
    const line = byId("course-doctor-status");
    line.replaceChildren(...inline(text));
    line.dataset.kind = kind;
  }

  function more(code) {
    const href = words.links[code];
    return href ? el("p", { class: "course-doctor-more" }, words.more + " ", el("a", { href: href }, words.entry)) : null;
  }

  function copyButton(label, text) {
    const button = el("button", { type: "button", class: "course-doctor-copy" }, label);
    button.addEventListener("click", () => {
      const done = () => {
        button.textContent = words.copied;
      };
      if (navigator.clipboard) {
        navigator.clipboard.writeText(text).then(done, () => {});
      }
    });
    return button;
  }

  function commands(lines) {
    const text = lines.join("\n");
    return el("div", { class: "course-doctor-commands" }, el("pre", {}, el("code", {}, text)),
      copyButton(words.copy, text));
  }

  function recommendation(rec) {
    const name = words.platforms[rec.platform] || rec.platform;
    return [
      el("p", {}, el("strong", {}, name + ": "), el("code", {}, rec.tensorflow),
        rec.mark ? el("span", { class: "course-doctor-mark" }, " (" + rec.mark + ")") : null),
      commands(rec.recommended_install || []),
      el("ul", {}, (rec.notes || []).map((note) => el("li", {}, inline(note.text), more(note.code)))),
    ];
  }

  function findings(list) {
    if (!list.length) {
      return [el("p", {}, words.no_findings)];
    }
    return SEVERITIES.filter((s) => list.some((f) => f.severity === s)).map((severity) =>
      el("section", { class: "course-doctor-severity", "data-severity": severity },
        el("h4", {}, words[severity]),
        list.filter((f) => f.severity === severity).map((f) =>
          el("div", { class: "course-doctor-finding severity-" + severity, "data-code": f.code },
            el("p", {}, el("code", {}, f.code), " ", inline(f.message)),
            f.fix ? el("p", {}, el("strong", {}, words.fix), " ", inline(f.fix)) : null,
            more(f.code)))));
  }

  function machine(data) {
    const lines = [
      fill(words.platform_line, { value: words.platforms[data.platform] || data.platform }),
      fill(words.python_line, { value: data.python || words.not_given }),
    ];
    if (data.gpus && data.gpus.length) {
      lines.push(fill(words.gpus_line, { value: data.gpus.map((g) => g.name).join(", ") }));
    }
    lines.push(data.driver_version
      ? fill(words.driver_line, { driver: data.driver_version, cuda: data.driver_cuda || "?" })
      : words.no_driver);
    if (data.toolkit_cuda) {
      lines.push(fill(words.toolkit_line, { value: data.toolkit_cuda }));
    }
    return el("ul", { class: "course-doctor-machine" }, lines.map((line) => el("li", {}, line)));
  }

  function raw(command, run, jsonId) {
    return [
      el("details", { class: "course-doctor-report" }, el("summary", {}, inline(words.report)),
        el("p", {}, words.same_as + " ", el("code", {}, command)), el("pre", {}, run.report)),
      el("details", { class: "course-doctor-json" }, el("summary", {}, words.json),
        copyButton(words.copy_json, run.json), el("pre", { id: jsonId }, run.json)),
    ];
  }

  function usage(message) {
    return el("div", { class: "course-doctor-usage" }, el("p", {}, words.usage), el("pre", {}, message));
  }

  function render(answer) {
    const out = byId("course-doctor-answer");
    const parts = [];
    if (answer.machine.exit === 2 || !answer.machine.stdout.trim()) {
      parts.push(usage(answer.machine.stderr));
    } else {
      const data = JSON.parse(answer.machine.stdout);
      const count = (severity) => data.findings.filter((f) => f.severity === severity).length;
      const errors = count("error");
      parts.push(
        el("p", { class: "course-doctor-verdict" }, el("strong", {}, data.answer.verdict)),
        el("h3", {}, words.machine), machine(data),
        el("p", { class: "course-doctor-result", "data-errors": errors },
          fill(errors ? words.result_errors : words.result_ok, { count: errors, warnings: count("warning") })),
        data.recommended
          ? [el("h3", {}, words.install), el("div", { class: "course-doctor-install" }, recommendation(data.recommended))]
          : null,
        data.alternatives && data.alternatives.length
          ? el("details", { class: "course-doctor-alternatives" }, el("summary", {}, words.alternatives),
            data.alternatives.flatMap(recommendation))
          : null,
        el("h3", {}, words.findings), findings(data.findings),
        raw(answer.command, { report: answer.report.stdout, json: answer.machine.stdout }, "course-doctor-json"));
    }
    if (answer.log) {
      parts.push(el("h3", {}, words.log_title));
      if (answer.log.exit === 2 || !answer.log.stdout.trim()) { // not a log: the command line's message says why
        parts.push(usage(answer.log.stderr));
      } else {
        const log = JSON.parse(answer.log.stdout);
        parts.push(log.log.problem ? null : el("p", {}, words.no_problem), findings(log.findings),
          raw(answer.log_command, { report: answer.log_report.stdout, json: answer.log.stdout },
            "course-doctor-log-json"));
      }
    }
    out.replaceChildren(...parts.flat(3).filter(Boolean));
    out.dataset.answers = String(state.answers);
  }

  function check(event) {
    event.preventDefault();
    if (!page) {
      return;
    }
    const request = {
      language: root.dataset.language,
      nvidia_smi: byId("course-doctor-smi").value,
      nvcc: byId("course-doctor-nvcc").value,
      log: byId("course-doctor-log").value,
      platform: byId("course-doctor-platform").value,
      python: byId("course-doctor-python").value,
    };
    const started = performance.now();
    try {
      const answer = JSON.parse(page.answer(JSON.stringify(request)));
      state.answerMs = performance.now() - started;
      state.answerTimes.push(state.answerMs);
      state.answers += 1;
      render(answer);
    } catch (error) {
      state.answers += 1;
      const last = String(error).trim().split("\n").pop();
      byId("course-doctor-answer").replaceChildren(el("p", { class: "course-doctor-crash" },
        fill(words.crashed, { error: last })));
    }
  }

  async function choose(input) {
    const file = input.files[0];
    if (!file || !page) {
      return;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    byId(input.dataset.for).value = page.decode(bytes);
    input.value = "";
  }

  async function start() {
    const started = performance.now();
    try {
      pyodide = await loadPyodide({ indexURL: base + "pyodide/" });
      const response = await fetch(base + "course_doctor.zip");
      if (!response.ok) {
        throw new Error("course_doctor.zip: HTTP " + response.status);
      }
      pyodide.unpackArchive(await response.arrayBuffer(), "zip", { extractDir: "/home/pyodide/doctor" });
      pyodide.runPython("import sys\nsys.path.insert(0, '/home/pyodide/doctor')");
      page = pyodide.pyimport("course_doctor_page");
      state.readyMs = performance.now() - started;
      state.ready = true;
      status(fill(words.ready, { seconds: (state.readyMs / 1000).toFixed(1) }), "ready");
      for (const input of root.querySelectorAll("input[type=file], button[type=submit]")) {
        input.disabled = false;
      }
    } catch (error) {
      state.error = String(error);
      status(fill(words.failed, { error: state.error }), "error");
    }
  }

  byId("course-doctor-form").addEventListener("submit", check);
  for (const input of root.querySelectorAll("input[type=file]")) {
    input.addEventListener("change", () => choose(input));
  }
  start();
})();
