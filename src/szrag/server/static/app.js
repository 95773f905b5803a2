// The szrag page: posts the question to /api/ask, reads the server-sent events as they arrive and
// renders the answer (Markdown), sources, images, the activity timeline and token usage.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = "szrag.token";

  const els = {
    form: $("ask-form"),
    question: $("question"),
    withAi: $("with-ai"),
    ask: $("ask"),
    stop: $("stop"),
    token: $("token"),
    tokenBox: $("token-box"),
    notice: $("notice"),
    answerSection: $("answer-section"),
    answer: $("answer"),
    usage: $("usage"),
    sourcesSection: $("sources-section"),
    sources: $("sources"),
    imagesSection: $("images-section"),
    images: $("images"),
    activitySection: $("activity-section"),
    activities: $("activities"),
  };

  let controller = null;
  let answerText = "";
  let renderPending = false;
  let blobUrls = [];
  let activityStart = null;
  const activityRows = new Map();

  els.token.value = localStorage.getItem(TOKEN_KEY) || "";
  els.token.addEventListener("change", () => localStorage.setItem(TOKEN_KEY, els.token.value.trim()));

  function authHeaders() {
    const token = els.token.value.trim();
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  function setNotice(kind, message) {
    if (!message) {
      els.notice.hidden = true;
      els.notice.textContent = "";
      els.notice.className = "";
      return;
    }
    els.notice.hidden = false;
    els.notice.className = kind;
    els.notice.dataset.kind = kind;
    els.notice.textContent = message;
  }

  function setBusy(busy) {
    els.ask.disabled = busy;
    els.stop.hidden = !busy;
    els.answer.setAttribute("aria-busy", busy ? "true" : "false");
  }

  function reset() {
    answerText = "";
    els.answer.innerHTML = "";
    els.usage.hidden = true;
    els.usage.textContent = "";
    els.sources.replaceChildren();
    els.images.replaceChildren();
    els.activities.replaceChildren();
    activityRows.clear();
    activityStart = null;
    blobUrls.forEach((url) => URL.revokeObjectURL(url));
    blobUrls = [];
    for (const section of [els.answerSection, els.sourcesSection, els.imagesSection, els.activitySection]) {
      section.hidden = true;
    }
    setNotice(null);
  }

  // Re-render at most once a frame while tokens stream in.
  function scheduleRender() {
    if (renderPending) return;
    renderPending = true;
    requestAnimationFrame(() => {
      renderPending = false;
      els.answer.innerHTML = window.SzragMarkdown.render(answerText);
    });
  }

  function showAnswer(text) {
    answerText = text;
    els.answerSection.hidden = false;
    els.answer.innerHTML = window.SzragMarkdown.render(answerText);
  }

  function formatMs(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return "";
    return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  }

  function durationOf(activity) {
    const meta = activity.metadata || {};
    return typeof meta.durationMs === "number" ? meta.durationMs : null;
  }

  function addActivity(activity) {
    els.activitySection.hidden = false;
    if (activityStart === null) activityStart = activity.timestamp;
    const row = document.createElement("li");
    row.className = `activity stage-${activity.stage}`;
    row.dataset.stage = activity.stage;
    row.dataset.status = activity.status;
    const cells = [
      ["offset", `+${formatMs(activity.timestamp - activityStart)}`],
      ["stage", activity.stage],
      [`status status-${activity.status}`, activity.status],
      ["message", activity.message],
      ["duration", formatMs(durationOf(activity))],
    ];
    for (const [cls, text] of cells) {
      const cell = document.createElement("span");
      cell.className = cls;
      cell.textContent = text;
      row.appendChild(cell);
    }
    els.activities.appendChild(row);
    // A step that reports start and end under one activity id: the start row shows the span.
    const key = activity.activityId;
    if (key) {
      const first = activityRows.get(key);
      if (first && activity.status !== "started") {
        const span = first.querySelector(".duration");
        if (!span.textContent) span.textContent = formatMs(activity.timestamp - Number(first.dataset.timestamp));
      } else if (!first) {
        row.dataset.timestamp = String(activity.timestamp);
        activityRows.set(key, row);
      }
    }
  }

  function addSources(sources) {
    if (!sources || !sources.length) return;
    els.sourcesSection.hidden = false;
    for (const source of sources) {
      const item = document.createElement("li");
      item.className = "source";
      const details = document.createElement("details");
      const summary = document.createElement("summary");
      const location = document.createElement("span");
      location.className = "location";
      location.textContent = `${source.path}:${source.start}-${source.end}`;
      summary.appendChild(location);
      if (source.heading) {
        const heading = document.createElement("span");
        heading.className = "heading";
        heading.textContent = source.heading;
        summary.appendChild(heading);
      }
      if (typeof source.score === "number") {
        const score = document.createElement("span");
        score.className = "score";
        score.textContent = `score ${source.score}`;
        summary.appendChild(score);
      }
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      code.textContent = source.text || "";
      pre.appendChild(code);
      details.append(summary, pre);
      item.appendChild(details);
      els.sources.appendChild(item);
    }
  }

  async function imageSource(url) {
    const headers = authHeaders();
    if (!headers.Authorization) return url;
    const response = await fetch(url, { headers });
    if (!response.ok) throw new Error(`image ${url}: ${response.status}`);
    const blobUrl = URL.createObjectURL(await response.blob());
    blobUrls.push(blobUrl);
    return blobUrl;
  }

  function addImages(images) {
    if (!images || !images.length) return;
    els.imagesSection.hidden = false;
    for (const image of images) {
      const figure = document.createElement("figure");
      const img = document.createElement("img");
      img.alt = image.path;
      img.loading = "lazy";
      imageSource(image.url).then((src) => { img.src = src; }, () => { img.alt = `${image.path} (unavailable)`; });
      const caption = document.createElement("figcaption");
      caption.textContent = image.path;
      figure.append(img, caption);
      els.images.appendChild(figure);
    }
  }

  function showUsage(result) {
    const usage = result.usage;
    if (!usage) return;
    const parts = [`${usage.input ?? 0} in`, `${usage.output ?? 0} out`, `${usage.total ?? 0} total`];
    const rounds = result.responseRounds ? ` · ${result.responseRounds} model round(s)` : "";
    const estimated = usage.estimated ? " (estimated)" : "";
    els.usage.textContent = `Tokens: ${parts.join(" · ")}${estimated}${rounds}`;
    els.usage.hidden = false;
  }

  function noKey(result) {
    return !result.usage && (result.activities || []).some((a) => a.stage === "ai" && a.status === "failed");
  }

  function showResult(result) {
    showAnswer(result.answer || answerText);
    addSources(result.sources);
    addImages(result.images);
    showUsage(result);
    if (noKey(result)) {
      setNotice("warn", "No model key is configured (AI_API_KEY), so this is a local answer built from the sources found.");
    } else if (result.context !== undefined) {
      setNotice("info", "Answered without the model: these are the sources and context szrag found.");
    }
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

  function handleEvent(event) {
    switch (event.name) {
      case "activity":
        addActivity(event.data);
        break;
      case "token":
        els.answerSection.hidden = false;
        answerText += event.data.text;
        scheduleRender();
        break;
      case "result":
        showResult(event.data);
        break;
      case "error":
        setNotice("error", `The answer failed: ${event.data.error}`);
        break;
      default:
        break;
    }
  }

  async function readStream(response) {
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
        if (event) handleEvent(event);
      }
    }
  }

  async function ask(question) {
    reset();
    setBusy(true);
    controller = new AbortController();
    try {
      const response = await fetch("/api/ask", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders() },
        body: JSON.stringify({ question, withAi: els.withAi.checked }),
        signal: controller.signal,
      });
      if (!response.ok) {
        let body = null;
        try { body = await response.json(); } catch (_) { body = null; }
        showFailure(response.status, body, response.headers.get("Retry-After"));
        return;
      }
      await readStream(response);
    } catch (error) {
      if (error.name === "AbortError") setNotice("info", "Stopped.");
      else setNotice("error", `Could not reach the server: ${error.message}`);
    } finally {
      controller = null;
      setBusy(false);
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
})();
