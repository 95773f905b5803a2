// The szrag page: a conversation of questions and answers. Each question is posted to /api/ask
// (with the conversation's id once the server gave one), the server-sent events are read as
// they arrive, and the turn shows the answer (Markdown, citations linked to their sources), the
// sources (numbered, highlighted lines), images, the activity timeline and token usage.
// A server over several repositories offers a picker (its choice kept in this browser): a
// question names the chosen repository, or none ("All repositories": the server routes it),
// and each answer says which repository it is from; its sources and images open there.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = "szrag.token";
  const REPOSITORY_KEY = "szrag.repository";
  const LOCATION = /([A-Za-z0-9_@.\-][A-Za-z0-9_@.\-/]*\.[A-Za-z0-9]+)(?::(\d+)(?:-(\d+))?)?/g;

  const els = {
    form: $("ask-form"),
    question: $("question"),
    withAi: $("with-ai"),
    ask: $("ask"),
    stop: $("stop"),
    fresh: $("new-conversation"),
    token: $("token"),
    tokenBox: $("token-box"),
    notice: $("notice"),
    thread: $("thread"),
    template: $("turn-template"),
    repository: $("repository"),
    modelState: $("model-state"),
    repositoryChoice: $("repository-choice"),
    picker: $("repository-picker"),
  };

  let controller = null;
  let conversationId = null;
  let conversationRepository = null; // where the conversation's answers come from
  let info = { repoUrl: null, model: { configured: true } };
  let turnCount = 0;

  els.token.value = localStorage.getItem(TOKEN_KEY) || "";
  els.token.addEventListener("change", () => {
    localStorage.setItem(TOKEN_KEY, els.token.value.trim());
    loadInfo();
  });

  function authHeaders() {
    const token = els.token.value.trim();
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  function setNotice(kind, message) {
    if (!message) {
      els.notice.hidden = true;
      els.notice.textContent = "";
      els.notice.className = "";
      els.notice.dataset.kind = "";
      return;
    }
    els.notice.hidden = false;
    els.notice.className = kind;
    els.notice.dataset.kind = kind;
    els.notice.textContent = message;
  }

  // --- what the page says before the first question ------------------------------------

  async function loadInfo() {
    try {
      const response = await fetch("/_szrag/info", { headers: authHeaders() });
      if (!response.ok) return;
      info = (await response.json()).data;
    } catch (_) {
      return;
    }
    els.repository.textContent = info.repository ? `· ${info.repository}` : "";
    document.title = info.repository ? `szrag · ${info.repository}` : "szrag";
    if ((info.repositories || []).length > 1) loadRepositories();
    if (info.model.configured) {
      els.modelState.textContent = `Answers are written by ${info.model.name}, grounded in this repository${info.liveTools ? " and the running application" : ""}.`;
    } else {
      els.modelState.textContent = "No model is configured (AI_API_KEY): answers show the sources found, without a written answer.";
      els.withAi.checked = false;
      els.withAi.disabled = true;
    }
    els.modelState.dataset.model = info.model.configured ? "configured" : "missing";
  }

  // The picker, shown only when the server holds more than one repository: "All
  // repositories" (routed), then each one GET /api/repositories lists.
  async function loadRepositories() {
    let listed;
    try {
      const response = await fetch("/api/repositories", { headers: authHeaders() });
      if (!response.ok) return;
      listed = (await response.json()).data;
    } catch (_) {
      return;
    }
    if (!Array.isArray(listed) || listed.length < 2) return;
    const all = els.picker.options[0];
    els.picker.replaceChildren(all);
    for (const repository of listed) {
      const option = document.createElement("option");
      option.value = repository.name;
      option.textContent = repository.name;
      els.picker.appendChild(option);
    }
    const kept = localStorage.getItem(REPOSITORY_KEY) || "";
    els.picker.value = listed.some((repository) => repository.name === kept) ? kept : "";
    els.repositoryChoice.hidden = false;
    showChoice();
  }

  function chosenRepository() {
    return els.repositoryChoice.hidden ? "" : els.picker.value;
  }

  function showChoice() {
    const chosen = chosenRepository();
    els.repository.textContent = chosen ? `· ${chosen}` : "· all repositories";
  }

  els.picker.addEventListener("change", () => {
    localStorage.setItem(REPOSITORY_KEY, els.picker.value);
    showChoice();
    conversationId = null; // the next question starts a conversation in the new scope
    conversationRepository = null;
  });

  // --- one turn of the conversation -----------------------------------------------------

  class Turn {
    constructor(question) {
      const node = els.template.content.firstElementChild.cloneNode(true);
      this.node = node;
      this.number = ++turnCount;
      node.dataset.turn = String(this.number);
      const part = (cls) => node.querySelector(`.${cls}`);
      this.parts = {
        answerSection: part("answer-section"),
        answer: part("answer"),
        usage: part("usage"),
        sourcesSection: part("sources-section"),
        sources: part("sources"),
        elsewhereSection: part("elsewhere-section"),
        elsewhere: part("elsewhere"),
        imagesSection: part("images-section"),
        images: part("images"),
        activitySection: part("activity-section"),
        activities: part("activities"),
      };
      part("asked").textContent = question;
      part("copy-answer").addEventListener("click", (event) => copy(this.answerText, event.target));
      this.answerText = "";
      this.sources = [];
      this.commit = null;
      this.repository = null; // the repository the answer is from, on a server of several
      this.renderPending = false;
      this.activityStart = null;
      this.activityRows = new Map();
      this.blobUrls = [];
      els.thread.appendChild(node);
    }

    setBusy(busy) {
      this.parts.answer.setAttribute("aria-busy", busy ? "true" : "false");
    }

    // Re-render at most once a frame while tokens stream in.
    addToken(text) {
      this.parts.answerSection.hidden = false;
      this.answerText += text;
      if (this.renderPending) return;
      this.renderPending = true;
      requestAnimationFrame(() => {
        this.renderPending = false;
        this.renderAnswer();
      });
    }

    renderAnswer() {
      this.parts.answer.innerHTML = window.SzragMarkdown.render(this.answerText);
      this.linkCitations();
      addCopyButtons(this.parts.answer);
    }

    showAnswer(text) {
      this.answerText = text || this.answerText;
      this.parts.answerSection.hidden = false;
      this.renderAnswer();
    }

    // A location the answer names (`path:12-30`, `[path:5]`, or a link to a path) that is
    // one of the sources becomes a link to it; a relative link to anything else goes to the
    // repository browser when there is one, else is plain text (it would be a 404 here).
    linkCitations() {
      const answer = this.parts.answer;
      for (const anchor of [...answer.querySelectorAll("a[href]")]) {
        const href = anchor.getAttribute("href");
        if (/^([a-z][a-z0-9+.-]*:|#|\/\/)/i.test(href)) continue;
        const target = this.sourceFor(href.replace(/^\.?\//, "").replace(/#L(\d+).*$/, ""), null);
        if (target !== null) {
          this.makeCitation(anchor, target);
        } else if (info.repoUrl) {
          anchor.href = `${repoUrl(this.commit)}/${href.replace(/^\.?\//, "")}`;
        } else {
          anchor.replaceWith(...anchor.childNodes);
        }
      }
      const walker = document.createTreeWalker(answer, NodeFilter.SHOW_TEXT);
      const texts = [];
      while (walker.nextNode()) texts.push(walker.currentNode);
      for (const node of texts) {
        if (node.parentElement.closest("a, pre")) continue;
        this.linkText(node);
      }
    }

    linkText(node) {
      const text = node.textContent;
      const pieces = [];
      let last = 0;
      for (const match of text.matchAll(LOCATION)) {
        const target = this.sourceFor(match[1], match[2] ? Number(match[2]) : null);
        if (target === null) continue;
        pieces.push(document.createTextNode(text.slice(last, match.index)));
        const anchor = document.createElement("a");
        anchor.textContent = match[0];
        if (match[2]) anchor.dataset.lines = `${match[2]}-${match[3] || match[2]}`;
        this.makeCitation(anchor, target);
        pieces.push(anchor);
        last = match.index + match[0].length;
      }
      if (!pieces.length) return;
      pieces.push(document.createTextNode(text.slice(last)));
      const parent = node.parentElement;
      if (parent.tagName === "CODE" && parent.childNodes.length === 1 && pieces.length === 3
          && !pieces[0].textContent && !pieces[2].textContent) {
        parent.replaceWith(wrap(pieces[1], parent)); // `path:1-5` as a whole: the code is the link
        return;
      }
      node.replaceWith(...pieces);
    }

    // The index of the source at `path` (its suffix, for a shortened path) holding `line`.
    sourceFor(path, line) {
      if (!path) return null;
      let best = null;
      this.sources.forEach((source, index) => {
        const same = source.path === path || source.path.endsWith(`/${path}`);
        if (!same) return;
        const holds = line === null || (source.start <= line && line <= source.end);
        if (best === null || (holds && !best.holds)) best = { index, holds };
      });
      return best === null ? null : best.index;
    }

    makeCitation(anchor, index) {
      const id = `turn-${this.number}-source-${index + 1}`;
      anchor.href = `#${id}`;
      anchor.classList.add("citation");
      anchor.removeAttribute("target");
      anchor.addEventListener("click", (event) => {
        event.preventDefault();
        const item = document.getElementById(id);
        if (!item) return;
        const details = item.querySelector("details");
        item.dataset.marked = anchor.dataset.lines || "";
        markLines(item);
        details.open = true;
        item.classList.add("cited");
        setTimeout(() => item.classList.remove("cited"), 1500);
        item.scrollIntoView({ block: "nearest" });
      });
    }

    addActivity(activity) {
      this.parts.activitySection.hidden = false;
      if (this.activityStart === null) this.activityStart = activity.timestamp;
      const row = document.createElement("li");
      row.className = `activity stage-${activity.stage}`;
      row.dataset.stage = activity.stage;
      row.dataset.status = activity.status;
      const meta = activity.metadata || {};
      const cells = [
        ["offset", `+${formatMs(activity.timestamp - this.activityStart)}`],
        ["stage", activity.stage],
        [`status status-${activity.status}`, activity.status],
        ["message", activity.message],
        ["duration", formatMs(typeof meta.durationMs === "number" ? meta.durationMs : null)],
      ];
      for (const [cls, text] of cells) {
        const cell = document.createElement("span");
        cell.className = cls;
        cell.textContent = text;
        row.appendChild(cell);
      }
      this.parts.activities.appendChild(row);
      // A step that reports start and end under one activity id: the start row shows the span.
      const key = activity.activityId;
      if (!key) return;
      const first = this.activityRows.get(key);
      if (first && activity.status !== "started") {
        const span = first.querySelector(".duration");
        if (!span.textContent) span.textContent = formatMs(activity.timestamp - Number(first.dataset.timestamp));
      } else if (!first) {
        row.dataset.timestamp = String(activity.timestamp);
        this.activityRows.set(key, row);
      }
    }

    addSources(sources) {
      if (!sources || !sources.length) return;
      this.sources = sources;
      this.parts.sourcesSection.hidden = false;
      this.parts.sources.replaceChildren();
      sources.forEach((source, index) => {
        const item = this.sourceItem(source, this.repository, true);
        item.id = `turn-${this.number}-source-${index + 1}`;
        this.parts.sources.appendChild(item);
      });
      this.linkCitations();
    }

    // Another repository's best files, offered beside this one's (a question that named
    // none, on a server of several): their lines come from their own repository.
    addElsewhere(sources) {
      if (!sources || !sources.length) return;
      this.parts.elsewhereSection.hidden = false;
      this.parts.elsewhere.replaceChildren();
      for (const source of sources) {
        const item = this.sourceItem(source, source.repository, false);
        item.dataset.repository = source.repository;
        this.parts.elsewhere.appendChild(item);
      }
    }

    sourceItem(source, repository, browsable) {
      const item = document.createElement("li");
      item.className = "source";
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      const location = document.createElement("span");
      location.className = "location";
      const where = `${source.path}:${source.start}-${source.end}`;
      location.textContent = browsable ? where : `${repository}:${where}`;
      summary.appendChild(location);
      if (source.heading) summary.appendChild(span("heading", source.heading));
      if (typeof source.score === "number") summary.appendChild(span("score", `score ${source.score}`));
      if (browsable && info.repoUrl) {
        const browse = document.createElement("a");
        browse.className = "browse";
        browse.href = `${repoUrl(this.commit)}/${encodeURI(source.path)}#L${source.start}-L${source.end}`;
        browse.textContent = "view";
        browse.rel = "noopener noreferrer";
        browse.target = "_blank";
        summary.appendChild(browse);
      }
      const body = document.createElement("div");
      body.className = "source-body";
      body.appendChild(numberedLines(source.text || "", source.start, null));
      details.append(summary, body);
      details.addEventListener("toggle", () => {
        if (details.open && !body.dataset.highlighted) this.highlight(source, body, repository);
      });
      item.appendChild(details);
      return item;
    }

    async highlight(source, body, repository) {
      body.dataset.highlighted = "pending";
      const query = new URLSearchParams({ path: source.path, start: source.start, end: source.end });
      if (repository) query.set("repository", repository);
      try {
        const response = await fetch(`/_szrag/source?${query}`, { headers: authHeaders() });
        if (!response.ok) return;
        const data = (await response.json()).data;
        body.replaceChildren(numberedLines(source.text || "", source.start, data.lines));
        body.dataset.highlighted = "done";
        markLines(body.closest("li"));
        body.dataset.language = data.language;
      } catch (_) {
        body.dataset.highlighted = "";
      }
    }

    addImages(images) {
      if (!images || !images.length) return;
      this.parts.imagesSection.hidden = false;
      for (const image of images) {
        const figure = document.createElement("figure");
        const img = document.createElement("img");
        img.alt = image.path;
        img.loading = "lazy";
        imageSource(image.url, this.blobUrls).then((src) => { img.src = src; }, () => { img.alt = `${image.path} (unavailable)`; });
        const caption = document.createElement("figcaption");
        caption.textContent = image.path;
        figure.append(img, caption);
        this.parts.images.appendChild(figure);
      }
    }

    showUsage(result) {
      const usage = result.usage;
      if (!usage) return;
      const parts = [`${usage.input ?? 0} in`, `${usage.output ?? 0} out`, `${usage.total ?? 0} total`];
      const rounds = result.responseRounds ? ` · ${result.responseRounds} model round(s)` : "";
      const estimated = usage.estimated ? " (estimated)" : "";
      this.parts.usage.textContent = `Tokens: ${parts.join(" · ")}${estimated}${rounds}`;
      this.parts.usage.hidden = false;
    }

    showResult(result) {
      this.sources = result.sources || [];
      this.repository = result.repository || null;
      this.commit = result.runningCommit || null;
      this.repository = result.repository || null;
      if (this.repository) {
        const from = this.node.querySelector(".answered-from");
        from.textContent = `from ${this.repository}`;
        from.hidden = false;
        this.node.dataset.repository = this.repository;
      }
      this.showAnswer(result.answer);
      this.addSources(result.sources);
      this.addElsewhere(result.otherSources);
      this.addImages(result.images);
      this.showUsage(result);
      if (result.conversationId) {
        conversationId = result.conversationId;
        conversationRepository = this.repository;
        els.fresh.hidden = false;
      }
      if (result.answerId) {
        this.node.dataset.answerId = result.answerId;
        this.offerFeedback(result.answerId);
      }
      if (noKey(result)) {
        setNotice("warn", "No model key is configured (AI_API_KEY), so this is a local answer built from the sources found.");
      } else if (result.context !== undefined) {
        setNotice("info", "Answered without the model: these are the sources and context szrag found.");
      }
    }
  }

  // --- feedback: a thumb, and for a wrong answer the file that was right ------------------

  Turn.prototype.offerFeedback = function (answerId) {
    const form = this.node.querySelector(".feedback");
    const state = form.querySelector(".feedback-state");
    const rightFiles = form.querySelector(".right-files");
    form.hidden = false;
    const repository = this.repository;
    const send = async (rating) => {
      const files = form.querySelector(".right-file").value.split(/[\s,]+/).filter(Boolean);
      state.textContent = "Sending…";
      try {
        const response = await fetch("/api/feedback", {
          method: "POST",
          headers: { "Content-Type": "application/json", ...authHeaders() },
          body: JSON.stringify({ answerId, rating, rightFiles: files, ...(repository ? { repository } : {}) }),
        });
        const body = await response.json().catch(() => null);
        if (!response.ok) {
          state.textContent = (body && body.error) || `Not kept (${response.status})`;
          form.dataset.state = "failed";
          return;
        }
        state.textContent = rating === "up" ? "Thanks: kept." : "Thanks: kept for the evaluation set.";
        form.dataset.state = "kept";
        form.dataset.rating = rating;
      } catch (error) {
        state.textContent = `Not kept: ${error.message}`;
        form.dataset.state = "failed";
      }
    };
    for (const button of form.querySelectorAll(".rate")) {
      button.addEventListener("click", () => {
        if (button.dataset.rating === "down") {
          rightFiles.hidden = false;
          form.querySelector(".right-file").focus();
          state.textContent = "Which file answers it? (optional)";
          return;
        }
        send("up");
      });
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send("down");
    });
  };

  // --- helpers --------------------------------------------------------------------------

  function span(cls, text) {
    const element = document.createElement("span");
    element.className = cls;
    element.textContent = text;
    return element;
  }

  // The lines a citation named (`path:6-15`), marked in its source.
  function markLines(item) {
    const [first, last] = (item.dataset.marked || "").split("-").map(Number);
    for (const line of item.querySelectorAll(".line")) {
      const number = Number(line.querySelector(".number").textContent);
      line.classList.toggle("marked", Boolean(first) && number >= first && number <= last);
    }
  }

  // `path:1-5` written as code: the link holds the code element.
  function wrap(anchor, code) {
    anchor.textContent = "";
    anchor.appendChild(code.cloneNode(true));
    return anchor;
  }

  // The repository browser's address (SZRAG_REPO_URL), at the commit that runs when the
  // answer named one: `.../blob/main` becomes `.../blob/<commit>`.
  function repoUrl(commit) {
    const base = String(info.repoUrl || "").replace(/\/+$/, "");
    if (!commit) return base;
    return base.replace(/(\/(?:-\/)?(?:blob|tree|src)\/)[^/]+/, (match, prefix) => prefix + commit);
  }

  // Lines numbered from `first`: the plain text, or the server's highlighted HTML (escaped
  // there) for the same lines; the copy button copies the text.
  function numberedLines(text, first, htmlLines) {
    const lines = htmlLines || String(text).replace(/\n$/, "").split("\n");
    const pre = document.createElement("pre");
    pre.className = "lines hl";
    const code = document.createElement("code");
    lines.forEach((line, offset) => {
      const row = document.createElement("span");
      row.className = "line";
      const number = document.createElement("span");
      number.className = "number";
      number.textContent = String(first + offset);
      number.setAttribute("aria-hidden", "true");
      const content = document.createElement("span");
      content.className = "content";
      if (htmlLines) content.innerHTML = line;
      else content.textContent = line;
      row.append(number, content, document.createTextNode("\n"));
      code.appendChild(row);
    });
    pre.appendChild(code);
    const box = document.createElement("div");
    box.className = "code-box";
    box.appendChild(pre);
    box.appendChild(copyButton(() => String(text)));
    return box;
  }

  function copyButton(textOf) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy secondary";
    button.textContent = "Copy";
    button.title = "Copy";
    button.addEventListener("click", (event) => copy(textOf(), event.target));
    return button;
  }

  function addCopyButtons(container) {
    for (const pre of container.querySelectorAll("pre")) {
      if (pre.parentElement.classList.contains("code-box")) continue;
      const box = document.createElement("div");
      box.className = "code-box";
      pre.replaceWith(box);
      box.append(pre, copyButton(() => pre.textContent));
    }
  }

  async function copy(text, button) {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
    } catch (_) {
      button.textContent = "Copy failed";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }

  function formatMs(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return "";
    return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  }

  async function imageSource(url, blobUrls) {
    const headers = authHeaders();
    if (!headers.Authorization) return url;
    const response = await fetch(url, { headers });
    if (!response.ok) throw new Error(`image ${url}: ${response.status}`);
    const blobUrl = URL.createObjectURL(await response.blob());
    blobUrls.push(blobUrl);
    return blobUrl;
  }

  function noKey(result) {
    return !result.usage && (result.activities || []).some((a) => a.stage === "ai" && a.status === "failed");
  }

  function showFailure(status, body, retryAfter) {
    const message = (body && (body.error || body.message)) || `request failed (${status})`;
    if (status === 401) {
      els.tokenBox.open = true;
      setNotice("error", `Access denied: ${message}. Enter a valid access token.`);
    } else if (status === 429) {
      const wait = Number(retryAfter) || 1;
      setNotice("warn", `Too many questions: rate limited. Try again in ${wait} s.`);
      els.notice.dataset.kind = "ratelimit";
    } else {
      setNotice("error", message);
    }
  }

  function parseEvent(block) {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) return null;
    return { name, data: JSON.parse(data.join("\n")) };
  }

  function handleEvent(turn, event) {
    switch (event.name) {
      case "activity":
        turn.addActivity(event.data);
        break;
      case "token":
        turn.addToken(event.data.text);
        break;
      case "result":
        turn.showResult(event.data);
        break;
      case "error":
        setNotice("error", `The answer failed: ${event.data.error}`);
        break;
      default:
        break;
    }
  }

  async function readStream(turn, response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let boundary;
      while ((boundary = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, boundary);
        buffer = buffer.slice(boundary + 2);
        const event = parseEvent(block);
        if (event) handleEvent(turn, event);
      }
    }
  }

  async function ask(question) {
    setNotice(null);
    const turn = new Turn(question);
    els.ask.disabled = true;
    els.stop.hidden = false;
    turn.setBusy(true);
    controller = new AbortController();
    const body = { question, withAi: els.withAi.checked };
    if (conversationId) body.conversationId = conversationId;
    // a follow-up stays where its conversation is; otherwise the choice, if any (else routed)
    const repository = conversationId ? conversationRepository : chosenRepository();
    if (repository) body.repository = repository;
    try {
      const response = await fetch("/api/ask", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders() },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!response.ok) {
        let failure = null;
        try { failure = await response.json(); } catch (_) { failure = null; }
        showFailure(response.status, failure, response.headers.get("Retry-After"));
        turn.node.remove();
        return;
      }
      els.question.value = "";
      await readStream(turn, response);
    } catch (error) {
      if (error.name === "AbortError") setNotice("info", "Stopped.");
      else setNotice("error", `Could not reach the server: ${error.message}`);
    } finally {
      controller = null;
      turn.setBusy(false);
      els.ask.disabled = false;
      els.stop.hidden = true;
    }
  }

  els.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = els.question.value.trim();
    if (!question) {
      setNotice("error", "Type a question first.");
      return;
    }
    ask(question);
  });
  els.question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) els.form.requestSubmit();
  });
  els.stop.addEventListener("click", () => controller && controller.abort());
  els.fresh.addEventListener("click", () => {
    conversationId = null;
    conversationRepository = null;
    els.thread.replaceChildren();
    els.fresh.hidden = true;
    setNotice(null);
    els.question.focus();
  });
  loadInfo();
})();
