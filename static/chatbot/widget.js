/*!
 * School tour concierge: the web chat widget (protocol v3: a hosted model's answer shows as it is written).
 *
 *   <script src="https://host/static/chatbot/widget.js" data-school="tampines" defer></script>
 *
 * adds a floating chat bubble to the page. Options (data-* attributes on the script tag):
 *   data-school       the school's slug (required)
 *   data-mode         "bubble" (default) or "page": full-page chat inside data-target
 *   data-target       CSS selector of the element that holds the page-mode chat (default: body)
 *   data-school-name  the name shown before the server has answered (optional)
 *   data-color        accent colour, e.g. "#0f766e" (optional)
 *   data-css          stylesheet URL (default: widget.css beside this script)
 *
 * The websocket URL, the stylesheet URL and the "add to calendar" links are derived from this
 * script's own src, never from the page, so the widget works on any page that includes it: on
 * another site the chat still talks to the concierge (which must list that site's origin in
 * CHAT_ALLOWED_ORIGINS). No dependencies, no build step.
 * Everything the parent or the model wrote is rendered with textContent, never as HTML.
 * The widget's own words are gettext() messages of Django's "djangojs" catalogue (locale/); the server sends
 * the texts of the parent's language in the "session" frame and with each live reply, and the widget re-labels
 * itself.
 * Elements with a data-stc-open attribute open the chat when clicked.
 */
(function () {
  "use strict";

  var PROTOCOL = 3;
  var PING_EVERY_MS = 25000;
  var PONG_TIMEOUT_MS = 10000;
  var BACKOFF_FIRST_MS = 500;
  var BACKOFF_MAX_MS = 30000;
  var CLOSE_UNKNOWN_SCHOOL = 4404;
  var CLOSE_UNAVAILABLE = 4503;     // the server cannot chat just now (Redis down): its error frame says so

  var script = document.currentScript || document.querySelector("script[data-school][src*='widget']");
  if (!script || !script.getAttribute("data-school")) {
    if (window.console) console.error("School chat: add data-school=\"<slug>\" to the widget's script tag.");
    return;
  }

  var options = {
    school: script.getAttribute("data-school"),
    mode: script.getAttribute("data-mode") === "page" ? "page" : "bubble",
    target: script.getAttribute("data-target"),
    schoolName: script.getAttribute("data-school-name") || "",
    color: script.getAttribute("data-color") || "",
    css: script.getAttribute("data-css") || ""
  };
  var scriptUrl = new URL(script.src, window.location.href);
  var origin = scriptUrl.origin;
  var wsUrl = (scriptUrl.protocol === "https:" ? "wss://" : "ws://") + scriptUrl.host +
    "/ws/chat/" + encodeURIComponent(options.school) + "/";
  var cssUrl = options.css ? new URL(options.css, window.location.href).href : new URL("widget.css", scriptUrl).href;
  var storageKey = "stc:" + options.school + ":visitor";
  var prefsKey = "stc:prefs";

  // --- the parent's language ----------------------------------------------------------

  var language = "en";
  var texts = {};                   // msgid -> text in `language` (from the server; English: none)

  function gettext(msgid) {
    return Object.prototype.hasOwnProperty.call(texts, msgid) && texts[msgid] ? String(texts[msgid]) : msgid;
  }

  function gettext_noop(msgid) { return msgid; }  // marks a message translated where it is shown

  function interpolate(format, values) {
    return format.replace(/%\((\w+)\)s/g, function (match, name) { return String(values[name]); });
  }

  // --- small helpers -----------------------------------------------------------------

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function attrs(node, values) {
    Object.keys(values).forEach(function (key) { node.setAttribute(key, values[key]); });
    return node;
  }

  var ICONS = {
    chat: "M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v8a2.5 2.5 0 0 1-2.5 2.5H10l-4.2 3.6A.75.75 0 0 1 4.5 19v-3A2.5 2.5 0 0 1 4 15.9z",
    close: "M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6l5.6-5.6L5 6.4z",
    send: "M3.4 20.4 21 12 3.4 3.6 3.4 10l12.6 2-12.6 2z",
    calendar: "M7 2h2v2h6V2h2v2h2a2 2 0 0 1 2 2v13a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2h2zm12 8H5v9h14zM5 8h14V6H5z",
    check: "M9.5 16.2 5.3 12l-1.4 1.4 5.6 5.6L20.1 8.4 18.7 7z",
    phone: "M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.25 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.45.57 3.57a1 1 0 0 1-.25 1z",
    info: "M11 7h2v2h-2zm0 4h2v6h-2zm1-9a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16z",
    bulb: "M9 21h6v-1H9zm3-19a7 7 0 0 0-4 12.7V17a1 1 0 0 0 1 1h6a1 1 0 0 0 1-1v-2.3A7 7 0 0 0 12 2z"
  };

  function icon(name) {
    var ns = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(ns, "svg");
    attrs(svg, { viewBox: "0 0 24 24", width: "20", height: "20", "aria-hidden": "true", focusable: "false" });
    svg.setAttribute("class", "stc-icon");
    var path = document.createElementNS(ns, "path");
    path.setAttribute("d", ICONS[name]);
    path.setAttribute("fill", "currentColor");
    svg.appendChild(path);
    return svg;
  }

  function store(key, value) {
    try {
      if (value === null) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, value);
    } catch (e) { /* storage blocked (private mode, third-party context): the chat still works */ }
  }

  function load(key) {
    try { return window.localStorage.getItem(key); } catch (e) { return null; }
  }

  function prefs() {
    try { return JSON.parse(load(prefsKey) || "{}") || {}; } catch (e) { return {}; }
  }

  function savePref(name, value) {
    var current = prefs();
    current[name] = value;
    store(prefsKey, JSON.stringify(current));
  }

  function randomId() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    var bytes = new Uint8Array(16);
    (window.crypto || window.msCrypto).getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function initials(name) {
    var words = String(name || "").split(/\s+/).filter(function (w) { return /^[A-Za-z0-9]/.test(w); });
    return ((words[0] || "?").charAt(0) + (words.length > 1 ? words[1].charAt(0) : "")).toUpperCase();
  }

  function timeOf(iso) {
    var date = iso ? new Date(iso) : new Date();
    if (isNaN(date.getTime())) return "";
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  var MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December"];

  // "2026-11-25" + "Wednesday" -> "Wednesday 25 November 2026" (the school's local date: no time-zone shifts);
  // in another language as the browser writes it ("2026年11月25日星期三").
  function longDate(isoDate, weekday) {
    var match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate || "");
    if (!match) return [weekday, isoDate].filter(Boolean).join(" ");
    if (language !== "en" && window.Intl) {
      var day = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
      return day.toLocaleDateString(language, { weekday: "long", day: "numeric", month: "long", year: "numeric",
        timeZone: "UTC" });
    }
    return [weekday, String(Number(match[3])), MONTHS[Number(match[2]) - 1], match[1]].filter(Boolean).join(" ");
  }

  function absoluteUrl(path) {
    try { return new URL(path, origin + "/").href; } catch (e) { return origin + "/"; }
  }

  function shortJson(value, limit) {
    var text;
    try { text = typeof value === "string" ? value : JSON.stringify(value); } catch (e) { text = String(value); }
    if (!text) return "";
    return text.length > limit ? text.slice(0, limit - 1) + "\u2026" : text;
  }

  // --- stylesheet -----------------------------------------------------------------------

  if (!document.querySelector("link[data-stc-css]")) {
    var link = attrs(document.createElement("link"), { rel: "stylesheet", href: cssUrl, "data-stc-css": "" });
    document.head.appendChild(link);
  }

  // --- DOM --------------------------------------------------------------------------------

  var ids = { panel: "stc-panel-" + options.school, title: "stc-title-" + options.school,
    input: "stc-input-" + options.school, counter: "stc-counter-" + options.school };

  var root = el("div", "stc-root stc-mode-" + options.mode);
  root.setAttribute("data-state", "idle");
  if (options.color && /^#[0-9a-fA-F]{3,8}$|^[a-z]+$|^(rgb|hsl)a?\([\d\s.,%]+\)$/.test(options.color)) {
    root.style.setProperty("--stc-accent", options.color);
  }

  var launcher = null;
  var unreadBadge = null;
  if (options.mode === "bubble") {
    launcher = attrs(el("button", "stc-launcher"), { type: "button", "aria-expanded": "false",
      "aria-controls": ids.panel });
    launcher.appendChild(icon("chat"));
    var launcherClose = icon("close");
    launcherClose.setAttribute("class", "stc-icon stc-launcher-close");
    launcher.appendChild(launcherClose);
    unreadBadge = attrs(el("span", "stc-unread"), { "aria-hidden": "true" });
    unreadBadge.hidden = true;
    launcher.appendChild(unreadBadge);
  }

  var panel = attrs(el("section", "stc-panel"), { id: ids.panel, "aria-labelledby": ids.title });
  if (options.mode === "bubble") {
    panel.setAttribute("role", "dialog");
    panel.hidden = true;
  }

  // header
  var header = el("header", "stc-header");
  var avatar = attrs(el("div", "stc-avatar"), { "aria-hidden": "true" });
  var heading = el("div", "stc-heading");
  var title = attrs(el("h2", "stc-title"), { id: ids.title });
  var status = el("p", "stc-status");
  heading.appendChild(title);
  heading.appendChild(status);
  var reasoningToggle = attrs(el("button", "stc-reasoning-toggle"), { type: "button", "aria-pressed": "false" });
  reasoningToggle.appendChild(icon("bulb"));
  var reasoningLabel = el("span", "stc-reasoning-label");
  reasoningToggle.appendChild(reasoningLabel);
  header.appendChild(avatar);
  header.appendChild(heading);
  header.appendChild(reasoningToggle);
  var closeButton = null;
  if (options.mode === "bubble") {
    closeButton = attrs(el("button", "stc-close"), { type: "button" });
    closeButton.appendChild(icon("close"));
    header.appendChild(closeButton);
  }

  // connection banner, messages, typing
  var banner = attrs(el("div", "stc-banner"), { role: "status" });
  banner.hidden = true;
  var messages = attrs(el("div", "stc-messages"), { role: "log", "aria-live": "polite", "aria-relevant": "additions",
    tabindex: "0" });
  var welcome = el("div", "stc-welcome");
  var welcomeTitle = el("p", "stc-welcome-title");
  var welcomeText = el("p", "stc-welcome-text");
  welcome.appendChild(welcomeTitle);
  welcome.appendChild(welcomeText);
  var starters = el("div", "stc-chips stc-starters");
  var STARTERS = [gettext_noop("Book a campus tour"), gettext_noop("What are the school fees?"),
    gettext_noop("Please call me back")];
  STARTERS.forEach(function () {
    var chip = attrs(el("button", "stc-chip"), { type: "button" });
    chip.addEventListener("click", function (event) { send(chip.textContent); keepFocus(event); });
    starters.appendChild(chip);
  });
  welcome.appendChild(starters);

  var pending = el("div", "stc-pending");
  pending.hidden = true;
  var typingRow = el("div", "stc-typing");
  var typingDots = attrs(el("span", "stc-dots"), { "aria-hidden": "true" });
  typingDots.appendChild(el("span"));
  typingDots.appendChild(el("span"));
  typingDots.appendChild(el("span"));
  typingRow.appendChild(typingDots);
  var typingLabel = el("span", "stc-visually-hidden", "");
  typingRow.appendChild(typingLabel);
  pending.appendChild(typingRow);

  // composer
  var form = attrs(el("form", "stc-composer"), { novalidate: "" });
  var inputLabel = attrs(el("label", "stc-visually-hidden"), { "for": ids.input });
  var input = attrs(el("textarea", "stc-input"), { id: ids.input, rows: "1",
    autocomplete: "off", "aria-describedby": ids.counter, enterkeyhint: "send" });
  var counter = attrs(el("span", "stc-counter"), { id: ids.counter, "aria-live": "polite" });
  var sendButton = attrs(el("button", "stc-send"), { type: "submit" });
  sendButton.appendChild(icon("send"));
  form.appendChild(inputLabel);
  form.appendChild(input);
  form.appendChild(counter);
  form.appendChild(sendButton);

  var footer = el("p", "stc-footer");

  panel.appendChild(header);
  panel.appendChild(banner);
  panel.appendChild(messages);
  panel.appendChild(form);
  panel.appendChild(footer);
  root.appendChild(panel);
  if (launcher) root.appendChild(launcher);

  // --- state ------------------------------------------------------------------------------

  var socket = null;
  var connected = false;            // a session frame arrived on the current socket
  var started = false;              // connect() was called once
  var stopped = false;              // the server said this chat does not exist: no reconnecting
  var attempt = 0;
  var reconnectTimer = null;
  var pingTimer = null;
  var pongTimer = null;
  var maxChars = 2000;
  var schoolName = options.schoolName;
  var conversationId = null;
  var outbox = [];                  // {clientId, text, node}: sent or to send, not yet acknowledged
  var held = [];                    // refused by the chat limit: sent again, in order, when it has room
  var heldTimer = null;
  var heldUntil = 0;
  var unavailableText = "";         // the server's words for "can't chat right now", until a session opens
  var rendered = {};                // message id -> node
  var reasoningFor = {};            // assistant message id -> reasoning node (kept across history re-renders)
  var liveReasoning = null;         // the reasoning node of the turn in progress
  var draft = null;                 // the answer being written: {number, node, text, stale} (protocol 3)
  var unread = 0;
  var isOpen = options.mode === "page";
  var statusText = "";

  function setName(name) {
    schoolName = name || schoolName || "School";
    var school = { school: schoolName };
    title.textContent = schoolName;
    avatar.textContent = initials(schoolName);
    welcomeTitle.textContent = interpolate(gettext("Hi there! Welcome to %(school)s."), school);
    if (launcher) {
      launcher.setAttribute("aria-label", interpolate(isOpen ? gettext("Close chat with %(school)s")
        : gettext("Chat with %(school)s"), school));
    }
    if (panel.getAttribute("role") === "dialog") {
      panel.setAttribute("aria-label", interpolate(gettext("Chat with %(school)s"), school));
    }
  }

  // `text`: a message id (gettext_noop), shown in the current language and again after a change of language.
  function setState(state, text) {
    root.setAttribute("data-state", state);
    statusText = text;
    status.textContent = gettext(text);
  }

  // Every fixed text of the widget, in the current language.
  function applyTexts() {
    root.setAttribute("lang", language);
    reasoningToggle.setAttribute("aria-label", gettext("Show reasoning"));
    reasoningToggle.setAttribute("title", gettext("Show how the assistant works out its answers"));
    reasoningLabel.textContent = gettext("Show reasoning");
    if (closeButton) closeButton.setAttribute("aria-label", gettext("Close chat"));
    messages.setAttribute("aria-label", gettext("Conversation"));
    welcomeText.textContent = gettext(
      "Ask me anything about the school, or book a campus tour. I can check which times are free right now.");
    Array.prototype.forEach.call(starters.children, function (chip, index) {
      chip.textContent = gettext(STARTERS[index]);
    });
    inputLabel.textContent = gettext("Your message");
    input.setAttribute("placeholder", gettext("Type your message\u2026"));
    sendButton.setAttribute("aria-label", gettext("Send message"));
    footer.textContent = gettext("Replies are written by an AI assistant and checked against the school's data.");
    setName(schoolName);
    if (statusText) status.textContent = gettext(statusText);
  }

  // The "session" frame and live replies: the parent's language and the widget's texts in it.
  function setLanguage(frame) {
    if (!frame.language || (frame.language === language && frame.texts === undefined)) return;
    language = frame.language;
    texts = frame.texts && typeof frame.texts === "object" ? frame.texts : {};
    applyTexts();
  }

  function showBanner(text) {
    banner.textContent = text || "";
    banner.hidden = !text;
  }

  function prefersReducedMotion() {
    return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  }

  function nearBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 120;
  }

  function scrollToEnd(force) {
    if (force || nearBottom()) {
      messages.scrollTo({ top: messages.scrollHeight, behavior: prefersReducedMotion() || force ? "auto" : "smooth" });
    }
  }

  function appendToLog(node) {
    var stick = nearBottom();
    messages.insertBefore(node, pending.parentNode === messages ? pending : null);
    if (stick) scrollToEnd(true);
  }

  // --- rendering messages ------------------------------------------------------------------

  function messageNode(role, text, createdAt) {
    var roleClass = role === "user" ? "user" : role === "staff" ? "staff" : "assistant";
    var row = el("div", "stc-msg stc-msg-" + roleClass);
    var school = { school: schoolName };
    var who = role === "user" ? gettext("You") : role === "staff" ? interpolate(gettext("%(school)s team"), school)
      : interpolate(gettext("%(school)s assistant"), school);
    row.appendChild(el("span", "stc-visually-hidden", who + ": "));
    var bubble = el("div", "stc-bubble", text);
    row.appendChild(bubble);
    var meta = el("div", "stc-meta");
    var time = el("time", "stc-time", timeOf(createdAt));
    if (createdAt) time.setAttribute("datetime", createdAt);
    meta.appendChild(time);
    var state = el("span", "stc-delivery");
    meta.appendChild(state);
    row.appendChild(meta);
    return row;
  }

  function setDelivery(node, text, kind) {
    var state = node.querySelector(".stc-delivery");
    state.textContent = text || "";
    node.setAttribute("data-delivery", kind || "");
  }

  function renderMessage(event, fromHistory) {
    if (event.id && rendered[event.id]) return rendered[event.id];
    var node = messageNode(event.role, event.text, event.created_at);
    if (fromHistory) node.classList.add("stc-msg-history");
    welcome.hidden = true;
    if (event.id) {
      node.setAttribute("data-id", String(event.id));
      rendered[event.id] = node;
    }
    if (event.role === "assistant" && event.id && reasoningFor[event.id]) {
      node.insertBefore(reasoningFor[event.id], node.querySelector(".stc-meta"));
    }
    var blocks = Array.isArray(event.blocks) ? event.blocks : [];
    blocks.forEach(function (block) {
      var blockNode = renderBlock(block);
      if (blockNode) node.appendChild(blockNode);
    });
    appendToLog(node);
    if (!fromHistory && event.role !== "user") noteUnread();
    return node;
  }

  function renderBlock(block) {
    if (!block || typeof block !== "object") return null;
    switch (block.type) {
      case "buttons": return renderButtons(block);
      case "chips": return renderChips(block);
      case "booking_confirmation": return renderBooking(block);
      case "callback_confirmation": return renderCallback(block);
      case "notice": return renderNotice(block);
      default: return null;
    }
  }

  // A button pressed from the keyboard is now disabled: keep the keyboard user's focus in the chat.
  function keepFocus(event) {
    if (event && event.detail === 0) input.focus();
  }

  function renderButtons(block) {
    var group = attrs(el("div", "stc-buttons"), { role: "group", "aria-label": gettext("Choose an option") });
    (block.options || []).forEach(function (option) {
      var button = attrs(el("button", "stc-option", option.label), { type: "button" });
      button.addEventListener("click", function (event) {
        if (button.disabled) return;
        Array.prototype.forEach.call(group.querySelectorAll("button"), function (b) { b.disabled = true; });
        button.classList.add("stc-chosen");
        button.setAttribute("aria-pressed", "true");
        group.classList.add("stc-used");
        send(String(option.value || option.label));
        keepFocus(event);
      });
      group.appendChild(button);
    });
    return group;
  }

  function renderChips(block) {
    var wrap = el("div", "stc-related");
    wrap.appendChild(el("p", "stc-related-title", gettext("Related topics")));
    var group = attrs(el("div", "stc-chips"), { role: "group", "aria-label": gettext("Related topics") });
    (block.options || []).forEach(function (option) {
      var chip = attrs(el("button", "stc-chip", option.label), { type: "button" });
      chip.addEventListener("click", function (event) {
        if (chip.disabled) return;
        chip.disabled = true;
        send(String(option.label));
        keepFocus(event);
      });
      group.appendChild(chip);
    });
    wrap.appendChild(group);
    return wrap;
  }

  function card(kind, iconName, heading, reference) {
    var node = el("div", "stc-card stc-card-" + kind);
    var top = el("div", "stc-card-top");
    var badge = attrs(el("span", "stc-card-icon"), { "aria-hidden": "true" });
    badge.appendChild(icon(iconName));
    top.appendChild(badge);
    var headingWrap = el("div");
    headingWrap.appendChild(el("p", "stc-card-title", heading));
    if (reference) {
      var ref = el("p", "stc-card-ref");
      ref.appendChild(el("span", "stc-card-ref-label", gettext("Reference") + " "));
      ref.appendChild(el("strong", "stc-reference", reference));
      headingWrap.appendChild(ref);
    }
    top.appendChild(headingWrap);
    node.appendChild(top);
    node.appendChild(el("dl", "stc-card-rows"));
    return node;
  }

  function row(cardNode, label, value) {
    if (value === undefined || value === null || value === "") return;
    var list = cardNode.querySelector("dl");
    var item = el("div", "stc-card-row");
    item.appendChild(el("dt", "", label));
    item.appendChild(el("dd", "", value));
    list.appendChild(item);
  }

  function renderBooking(block) {
    var node = card("booking", "check", block.rescheduled ? gettext("Tour rescheduled") : gettext("Tour booked"),
      block.booking_id);
    row(node, gettext("Date"), longDate(block.date, block.weekday));
    row(node, gettext("Time"), block.time);
    row(node, gettext("Child"), block.child_name);
    row(node, gettext("Where"), [block.school, block.address].filter(Boolean).join(", "));
    if (block.ics_url) {
      var link = attrs(el("a", "stc-card-action"), { href: absoluteUrl(block.ics_url), download: "",
        rel: "noopener" });
      link.appendChild(icon("calendar"));
      link.appendChild(el("span", "", gettext("Add to calendar")));
      node.appendChild(link);
    }
    if (block.manage_url) {
      var manage = attrs(el("a", "stc-card-action"), { href: absoluteUrl(block.manage_url), target: "_blank",
        rel: "noopener" });
      manage.appendChild(el("span", "", gettext("Change or cancel")));
      node.appendChild(manage);
    }
    return node;
  }

  function renderCallback(block) {
    var node = card("callback", "phone", gettext("Callback requested"), block.callback_id);
    row(node, gettext("Name"), block.parent_name);
    row(node, gettext("Phone"), block.parent_phone);
    row(node, gettext("When"),
      [longDate(block.due_date, block.weekday), block.window || block.best_time_to_call].filter(Boolean).join(", "));
    row(node, gettext("Topic"), block.topic);
    return node;
  }

  function renderNotice(block) {
    var node = attrs(el("div", "stc-notice"), { role: "note" });
    node.appendChild(icon("info"));
    node.appendChild(el("span", "", block.text));
    return node;
  }

  function note(text, kind) {
    var node = el("div", "stc-note" + (kind ? " stc-note-" + kind : ""), text);
    appendToLog(node);
    return node;
  }

  function disableStaleOptions() {
    // Slot buttons answered by a later parent message are no longer live.
    var nodes = messages.querySelectorAll(".stc-msg");
    var seenUserAfter = false;
    for (var i = nodes.length - 1; i >= 0; i--) {
      if (nodes[i].classList.contains("stc-msg-user")) seenUserAfter = true;
      else if (seenUserAfter) {
        Array.prototype.forEach.call(nodes[i].querySelectorAll(".stc-buttons button"), function (b) {
          b.disabled = true;
        });
      }
    }
  }

  // --- reasoning -------------------------------------------------------------------------------

  function reasoningNode() {
    var node = el("div", "stc-reasoning");
    var summary = el("p", "stc-reasoning-summary", gettext("Reasoning"));
    node.appendChild(summary);
    node.appendChild(el("ol", "stc-steps"));
    return node;
  }

  var STEP_LABELS = { think: gettext_noop("Think"), act: gettext_noop("Act"), observe: gettext_noop("Observe"),
    answer: gettext_noop("Answer") };

  function addStep(step) {
    if (!liveReasoning) liveReasoning = reasoningNode();
    if (liveReasoning.parentNode !== pending) pending.appendChild(liveReasoning);
    pending.hidden = false;
    var item = el("li", "stc-step stc-step-" + (STEP_LABELS[step.kind] ? step.kind : "think"));
    item.appendChild(el("span", "stc-step-kind", STEP_LABELS[step.kind] ? gettext(STEP_LABELS[step.kind]) : step.kind));
    var body = el("div", "stc-step-body");
    if (step.kind === "act" && step.tool_name) {
      body.appendChild(el("code", "stc-step-tool", step.tool_name + "(" + shortJson(step.tool_arguments, 160) + ")"));
    } else if (step.kind === "observe") {
      if (step.tool_name) body.appendChild(el("code", "stc-step-tool", step.tool_name));
      body.appendChild(el("span", "stc-step-text", shortJson(step.tool_result, 220)));
    }
    if (step.kind === "answer") body.appendChild(el("span", "stc-step-text", gettext("Reply written.")));
    else if (step.content && step.kind !== "observe") {
      body.appendChild(el("span", "stc-step-text", shortJson(step.content, 400)));
    }
    if (step.latency_ms) body.appendChild(el("span", "stc-step-latency", step.latency_ms + " ms"));
    item.appendChild(body);
    var list = liveReasoning.querySelector(".stc-steps");
    list.appendChild(item);
    liveReasoning.querySelector(".stc-reasoning-summary").textContent = list.children.length === 1
      ? gettext("Reasoning \u00b7 1 step")
      : interpolate(gettext("Reasoning \u00b7 %(count)s steps"), { count: list.children.length });
    if (root.classList.contains("stc-show-reasoning")) scrollToEnd(false);
  }

  function setReasoningVisible(visible) {
    root.classList.toggle("stc-show-reasoning", visible);
    reasoningToggle.setAttribute("aria-pressed", visible ? "true" : "false");
    savePref("reasoning", visible);
  }

  // --- typing and pending ------------------------------------------------------------------

  function setTyping(active) {
    typingRow.hidden = !active;
    typingLabel.textContent = active ? interpolate(gettext("%(school)s is typing"), { school: schoolName }) : "";
    if (active) {
      if (liveReasoning && liveReasoning.parentNode === pending) {
        // a new turn starts: the previous steps were never claimed by a reply
        pending.removeChild(liveReasoning);
      }
      liveReasoning = null;
      pending.hidden = false;
      scrollToEnd(false);
    } else if (!liveReasoning) {
      pending.hidden = true;
    }
  }

  function claimReasoning(messageId, node) {
    if (!liveReasoning) return;
    reasoningFor[messageId] = liveReasoning;
    node.insertBefore(liveReasoning, node.querySelector(".stc-meta"));
    liveReasoning = null;
    if (typingRow.hidden) pending.hidden = true;
  }

  // --- the answer as it is written (protocol 3) -------------------------------------------------------

  function removeDraft() {
    if (draft && draft.node.parentNode) draft.node.parentNode.removeChild(draft.node);
    draft = null;
  }

  function onDelta(frame) {
    if (!draft || draft.number !== frame.draft) {
      if (frame.at !== 0) return;  // opened in the middle of it: the reply will say it all
      removeDraft();
      // read by screen readers once, as the reply: not word by word
      draft = { number: frame.draft, node: attrs(messageNode("assistant", "", null), { "aria-hidden": "true" }),
        text: "", stale: false };
      draft.node.classList.add("stc-msg-draft");
      welcome.hidden = true;
      appendToLog(draft.node);
    }
    if (draft.stale || frame.at !== draft.text.length) return;  // a piece went missing: the reply says it all
    draft.text += frame.text;
    draft.node.querySelector(".stc-bubble").textContent = draft.text;
    scrollToEnd(false);
  }

  var DROPPED = { interrupted: gettext_noop("Interrupted \u2014 answering again\u2026"),
    more_messages: gettext_noop("You wrote again \u2014 answering everything together\u2026") };

  function onDropped(frame) {
    if (!draft || draft.number !== frame.draft) return;
    if (!DROPPED[frame.reason]) {  // the model turned to its tools: that text was not the answer
      removeDraft();
      return;
    }
    draft.stale = true;
    draft.node.classList.add("stc-msg-draft-stale");
    draft.node.querySelector(".stc-delivery").textContent = gettext(DROPPED[frame.reason]);
  }

  function replaceDraft(frame, node) {
    // the reply is the answer: it takes the draft's place, and says so when its text is not the one shown
    var replaced = draft !== null && frame.draft !== "kept";
    removeDraft();
    if (replaced) {
      var said = gettext("This reply replaces the answer shown while it was being written.");
      node.insertBefore(el("p", "stc-replaced", said), node.querySelector(".stc-meta"));
    }
  }

  // --- sending -------------------------------------------------------------------------------------

  function send(text) {
    text = String(text || "").trim();
    if (!text) return false;
    if (text.length > maxChars) {
      showCounter(true);
      return false;
    }
    welcome.hidden = true;
    var item = { clientId: randomId(), text: text, node: messageNode("user", text, null) };
    item.node.setAttribute("data-client-id", item.clientId);
    setDelivery(item.node, gettext("Sending\u2026"), "sending");
    appendToLog(item.node);
    scrollToEnd(true);
    outbox.push(item);
    transmit(item);
    disableStaleOptions();
    return true;
  }

  function transmit(item) {
    if (socket && connected && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ type: "message", text: item.text, client_id: item.clientId }));
    } else {
      setDelivery(item.node, gettext("Waiting for connection\u2026"), "waiting");
    }
  }

  function takeFromOutbox(clientId) {
    for (var i = 0; i < outbox.length; i++) {
      if (outbox[i].clientId === clientId) return outbox.splice(i, 1)[0];
    }
    return null;
  }

  function onAck(frame) {
    var item = takeFromOutbox(frame.client_id);
    if (!item) return;
    var existing = frame.message_id && rendered[frame.message_id];
    if (existing && existing !== item.node) {
      // already shown from the history (the ack of an earlier send was lost): keep one copy
      item.node.parentNode && item.node.parentNode.removeChild(item.node);
      return;
    }
    if (frame.message_id) {
      item.node.setAttribute("data-id", String(frame.message_id));
      rendered[frame.message_id] = item.node;
    }
    setDelivery(item.node, "", "sent");
  }

  // A message the chat limit refused is sent again by itself once the limit has room (`retry_after` seconds),
  // with any others refused meanwhile, in the order they were typed.
  function holdForLimit(item, seconds) {
    held.push(item);
    heldUntil = Math.max(heldUntil, Date.now() + seconds * 1000);
    held.forEach(function (h) {
      setDelivery(h.node, interpolate(gettext("Sending in %(seconds)s s\u2026"),
        { seconds: Math.max(1, Math.round((heldUntil - Date.now()) / 1000)) }), "waiting");
    });
    clearTimeout(heldTimer);
    heldTimer = setTimeout(sendHeld, Math.max(0, heldUntil - Date.now()));
  }

  function sendHeld() {
    var items = held;
    held = [];
    heldUntil = 0;
    items.forEach(function (item) {
      setDelivery(item.node, gettext("Sending\u2026"), "sending");
      outbox.push(item);
      transmit(item);
    });
  }

  function onError(frame) {
    var item = frame.client_id ? takeFromOutbox(frame.client_id) : null;
    if (item && frame.code === "rate_limited" && frame.retry_after > 0) {
      holdForLimit(item, frame.retry_after);
    } else if (frame.code === "unavailable") {
      unavailableText = frame.text || gettext("Something went wrong.");
      showBanner(unavailableText);
    } else if (item) {
      setDelivery(item.node, gettext("Not sent"), "failed");
      var error = attrs(el("div", "stc-error"), { role: "alert" });
      error.appendChild(el("span", "", frame.text || gettext("Something went wrong.")));
      var retry = attrs(el("button", "stc-retry", gettext("Try again")), { type: "button" });
      retry.addEventListener("click", function () {
        error.parentNode && error.parentNode.removeChild(error);
        setDelivery(item.node, gettext("Sending\u2026"), "sending");
        outbox.push(item);
        transmit(item);
      });
      error.appendChild(retry);
      item.node.appendChild(error);
      scrollToEnd(false);
    } else {
      var node = note(frame.text || gettext("Something went wrong."), "error");
      node.setAttribute("role", "alert");
    }
  }

  function onQueued(frame) {
    var node = frame.message_id && rendered[frame.message_id];
    if (node) setDelivery(node, gettext("Queued"), "queued");
    note(frame.text || gettext("I'll answer this next."), "queued");
  }

  function onReply(frame) {
    // a live reply carries its language (the widget re-labels itself first), and a turn's reply its last
    // reasoning steps; it ends the typing indicator (protocol 2)
    setLanguage(frame);
    if (frame.steps) frame.steps.forEach(addStep);
    var fresh = !(frame.id && rendered[frame.id]);
    var node = renderMessage(frame, false);
    if (frame.role === "assistant" && fresh) replaceDraft(frame, node);
    if (frame.role === "assistant" && frame.id) claimReasoning(frame.id, node);
    if (frame.steps) setTyping(false);
    // everything the parent sent before this reply has been answered
    Array.prototype.forEach.call(messages.querySelectorAll(".stc-msg-user[data-delivery='queued']"), function (n) {
      if (Number(n.getAttribute("data-id")) < Number(frame.id)) setDelivery(n, "", "sent");
    });
  }

  // --- session ----------------------------------------------------------------------------------

  function onSession(frame) {
    connected = true;
    attempt = 0;
    if (frame.protocol !== PROTOCOL && window.console) {
      console.warn("School chat: server speaks protocol " + frame.protocol + ", widget speaks " + PROTOCOL);
    }
    if (frame.visitor_token) store(storageKey, frame.visitor_token);
    if (frame.max_message_chars) {
      maxChars = frame.max_message_chars;
      input.setAttribute("maxlength", String(maxChars));
    }
    setName(frame.school && frame.school.name);
    setLanguage(frame);
    setState("open", gettext_noop("Online \u00b7 replies in seconds"));
    unavailableText = "";
    showBanner("");

    // Re-render the conversation from the server's history; keep what is still unsent.
    if (conversationId !== frame.conversation_id || frame.new_visitor) reasoningFor = {};
    conversationId = frame.conversation_id;
    rendered = {};
    draft = null;  // a draft on screen goes with the rest: the reply is in the history, or comes live
    Array.prototype.slice.call(messages.children).forEach(function (child) {
      if (child !== welcome && child !== pending) messages.removeChild(child);
    });
    var history = Array.isArray(frame.history) ? frame.history : [];
    welcome.hidden = history.length > 0 || outbox.length > 0;
    history.forEach(function (event) { renderMessage(event, true); });
    disableStaleOptions();
    outbox.forEach(function (item) {
      appendToLog(item.node);
      setDelivery(item.node, gettext("Sending\u2026"), "sending");
      transmit(item);
    });
    scrollToEnd(true);
    startHeartbeat();
  }

  function onFrame(event) {
    var frame;
    try { frame = JSON.parse(event.data); } catch (e) { return; }
    if (!frame || typeof frame !== "object") return;
    switch (frame.type) {
      case "session": onSession(frame); break;
      case "ack": onAck(frame); break;
      case "typing": setTyping(Boolean(frame.active)); break;
      case "reasoning_steps": (frame.steps || []).forEach(addStep); break;
      case "message": onReply(frame); break;
      case "reply_delta": onDelta(frame); break;
      case "reply_dropped": onDropped(frame); break;
      case "queued": onQueued(frame); break;
      case "error": onError(frame); break;
      case "pong": clearTimeout(pongTimer); break;
      default: break;
    }
  }

  // --- connection -----------------------------------------------------------------------------

  function connect() {
    started = true;
    if (stopped) return;
    clearTimeout(reconnectTimer);
    var token = load(storageKey);
    var url = wsUrl + "?protocol=" + PROTOCOL + (token ? "&visitor=" + encodeURIComponent(token) : "");
    setState(attempt ? "reconnecting" : "connecting",
      attempt ? gettext_noop("Reconnecting\u2026") : gettext_noop("Connecting\u2026"));
    var ws;
    try { ws = new WebSocket(url); } catch (e) { scheduleReconnect(); return; }
    socket = ws;
    connected = false;
    ws.onmessage = function (event) { if (ws === socket) onFrame(event); };
    ws.onclose = function (event) {
      if (ws !== socket) return;
      socket = null;
      connected = false;
      stopHeartbeat();
      setTyping(false);
      if (event.code === CLOSE_UNAVAILABLE) {  // its error frame is on the banner: try again, slowly
        attempt = Math.max(attempt, 4);
      }
      if (event.code === CLOSE_UNKNOWN_SCHOOL) {
        stopped = true;
        setState("closed", gettext_noop("Unavailable"));
        showBanner(gettext("This chat isn't available right now. Please contact the school directly."));
        return;
      }
      scheduleReconnect();
    };
    ws.onerror = function () { /* onclose follows and reconnects */ };
  }

  function scheduleReconnect() {
    if (stopped) return;
    var delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * Math.pow(2, attempt));
    delay = Math.round(delay * (0.75 + Math.random() * 0.5));
    attempt += 1;
    setState("reconnecting", gettext_noop("Reconnecting\u2026"));
    if (unavailableText) {
      showBanner(unavailableText);
    } else if (attempt > 1) {
      showBanner(interpolate(gettext("Connection lost. Trying again in %(seconds)s s\u2026"),
        { seconds: Math.max(1, Math.round(delay / 1000)) }));
    }
    outbox.forEach(function (item) { setDelivery(item.node, gettext("Waiting for connection\u2026"), "waiting"); });
    clearTimeout(reconnectTimer);
    reconnectTimer = setTimeout(connect, delay);
  }

  function reconnectNow() {
    if (!started || stopped || socket) return;
    attempt = Math.min(attempt, 1);
    connect();
  }

  function startHeartbeat() {
    stopHeartbeat();
    pingTimer = setInterval(function () {
      if (!socket || socket.readyState !== WebSocket.OPEN) return;
      socket.send(JSON.stringify({ type: "ping" }));
      clearTimeout(pongTimer);
      var ws = socket;
      pongTimer = setTimeout(function () { if (ws === socket) ws.close(); }, PONG_TIMEOUT_MS);
    }, PING_EVERY_MS);
  }

  function stopHeartbeat() {
    clearInterval(pingTimer);
    clearTimeout(pongTimer);
  }

  window.addEventListener("online", reconnectNow);
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") reconnectNow();
  });

  // --- composer ---------------------------------------------------------------------------------

  function showCounter(force) {
    var length = input.value.length;
    var near = length > maxChars * 0.8;
    counter.textContent = near || force ? length + " / " + maxChars : "";
    counter.classList.toggle("stc-over", length >= maxChars);
  }

  function autoGrow() {
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight, 140) + "px";
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (send(input.value)) {
      input.value = "";
      autoGrow();
      showCounter(false);
    }
    input.focus();
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
      event.preventDefault();
      if (typeof form.requestSubmit === "function") form.requestSubmit();
      else form.dispatchEvent(new Event("submit", { cancelable: true }));
    }
  });

  input.addEventListener("input", function () {
    if (input.value.length > maxChars) input.value = input.value.slice(0, maxChars);
    autoGrow();
    showCounter(false);
  });

  reasoningToggle.addEventListener("click", function () {
    setReasoningVisible(!root.classList.contains("stc-show-reasoning"));
  });

  // --- open / close (bubble mode) -------------------------------------------------------------

  function noteUnread() {
    if (isOpen || !unreadBadge) return;
    unread += 1;
    unreadBadge.textContent = String(unread);
    unreadBadge.hidden = false;
    launcher.setAttribute("aria-label", interpolate(gettext("Chat with %(school)s (%(count)s new)"),
      { school: schoolName, count: unread }));
  }

  function open() {
    if (options.mode !== "bubble") return;
    isOpen = true;
    panel.hidden = false;
    root.classList.add("stc-open");
    launcher.setAttribute("aria-expanded", "true");
    unread = 0;
    unreadBadge.hidden = true;
    setName(schoolName);
    try { window.sessionStorage.setItem("stc:" + options.school + ":open", "1"); } catch (e) { /* ignore */ }
    if (!started) connect();
    scrollToEnd(true);
    input.focus();
  }

  function close(returnFocus) {
    if (options.mode !== "bubble") return;
    isOpen = false;
    panel.hidden = true;
    root.classList.remove("stc-open");
    launcher.setAttribute("aria-expanded", "false");
    setName(schoolName);
    try { window.sessionStorage.removeItem("stc:" + options.school + ":open"); } catch (e) { /* ignore */ }
    if (returnFocus) launcher.focus();
  }

  if (launcher) {
    launcher.addEventListener("click", function () { if (isOpen) close(true); else open(); });
    closeButton.addEventListener("click", function () { close(true); });
    panel.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { event.preventDefault(); close(true); }
    });
    document.addEventListener("click", function (event) {
      var opener = event.target && event.target.closest && event.target.closest("[data-stc-open]");
      if (opener) { event.preventDefault(); open(); }
    });
  }

  // --- mount ----------------------------------------------------------------------------------------

  messages.appendChild(welcome);
  messages.appendChild(pending);
  typingRow.hidden = true;
  setName(schoolName || "School");
  setState("idle", gettext_noop("We're here to help"));
  applyTexts();
  setReasoningVisible(Boolean(prefs().reasoning));

  function mount() {
    var host = (options.mode === "page" && options.target && document.querySelector(options.target)) || document.body;
    host.appendChild(root);
    window.SchoolChat = { open: open, close: close, send: send, element: root };
    if (options.mode === "page") {
      connect();
      input.focus({ preventScroll: true });
    } else {
      var wasOpen = false;
      try { wasOpen = window.sessionStorage.getItem("stc:" + options.school + ":open") === "1"; } catch (e) { /* */ }
      if (wasOpen) open();
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
