// phasegate dashboard: live timeline (server-sent events) and answering decisions.
// No framework, no build step. Every HTML fragment comes from the server, escaped there.
"use strict";

(function () {
  const timeline = document.getElementById("timeline");
  const decisions = document.getElementById("decisions");
  const LIST_REFRESH_MS = 3000;

  function replaceDecisions(html, version) {
    if (!decisions || decisions.dataset.version === version) return;  // unchanged
    decisions.dataset.version = version;
    // Keep what the person is typing in a note while the panel is redrawn.
    const notes = {};
    decisions.querySelectorAll(".decision.pending").forEach(function (box) {
      const input = box.querySelector("input[name=note]");
      if (input && input.value) notes[box.dataset.id] = input.value;
    });
    decisions.innerHTML = html;
    decisions.querySelectorAll(".decision.pending").forEach(function (box) {
      const input = box.querySelector("input[name=note]");
      if (input && notes[box.dataset.id]) input.value = notes[box.dataset.id];
    });
  }

  function follow() {
    if (!timeline || !window.EventSource) return;
    const live = document.getElementById("live");
    // The events address may name the item's workflow already (?workflow=...).
    const events = timeline.dataset.events;
    const url = events + (events.indexOf("?") < 0 ? "?" : "&") + "offset=" +
      encodeURIComponent(timeline.dataset.offset);
    const source = new EventSource(url);
    source.onopen = function () {
      if (live) { live.textContent = "live"; live.classList.add("on"); }
    };
    source.onerror = function () {
      if (live) { live.textContent = "reconnecting…"; live.classList.remove("on"); }
    };
    source.addEventListener("entries", function (message) {
      const payload = JSON.parse(message.data);
      // The journal was read again from its start (it was replaced): start over.
      if (payload.reset) timeline.innerHTML = "";
      const before = timeline.children.length;
      timeline.insertAdjacentHTML("beforeend", payload.html);
      for (let i = before; i < timeline.children.length; i++) {
        timeline.children[i].classList.add("fresh");
      }
      timeline.dataset.offset = message.lastEventId;
      const last = timeline.lastElementChild;
      const nearEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 200;
      if (last && nearEnd) last.scrollIntoView({ block: "nearest" });
    });
    source.addEventListener("summary", function (message) {
      const payload = JSON.parse(message.data);
      const summary = document.getElementById("summary");
      if (summary) summary.innerHTML = payload.html;
      const phases = document.getElementById("phases");
      if (phases) phases.outerHTML = payload.phases;
    });
    source.addEventListener("decisions", function (message) {
      const payload = JSON.parse(message.data);
      replaceDecisions(payload.html, payload.version);
    });
    source.addEventListener("problem", function (message) {
      source.close();
      if (live) { live.textContent = JSON.parse(message.data).message; live.classList.remove("on"); }
    });
  }

  // Answer a decision without leaving the page (the form still works without script).
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("answer")) return;
    event.preventDefault();
    const button = event.submitter;
    const body = new FormData(form);
    if (button && button.name) body.set(button.name, button.value);
    const box = form.closest(".decision");
    const status = box ? box.querySelector(".message") : null;
    form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    fetch(form.action, {
      method: "POST",
      body: body,
      headers: { "Accept": "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.json().then(function (payload) { return [response.ok, payload]; });
      })
      .then(function (result) {
        if (result[0]) {
          replaceDecisions(result[1].html, result[1].version);
        } else {
          if (status) status.textContent = result[1].error;
          form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
        }
      })
      .catch(function (error) {
        if (status) status.textContent = "Could not reach phasegate: " + error;
        form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      });
  });

  // The list of items: read again every few seconds, so runs that start or end, items
  // created and decisions asked show without a reload.
  function refreshList() {
    const list = document.getElementById("items");
    if (!list || !window.fetch || !window.DOMParser) return;
    let reading = false;  // one read at a time, however slow a long list is to build
    window.setInterval(function () {
      if (document.hidden || reading) return;
      reading = true;
      fetch(window.location.pathname + window.location.search, { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (text) {
          if (!text) return;
          const fresh = new DOMParser().parseFromString(text, "text/html").getElementById("items");
          if (fresh && fresh.innerHTML !== list.innerHTML) list.innerHTML = fresh.innerHTML;
        })
        .catch(function () { /* the server is gone for now: try again later */ })
        .then(function () { reading = false; });
    }, LIST_REFRESH_MS);
  }

  follow();
  refreshList();
})();
