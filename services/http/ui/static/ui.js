"use strict";
// Athenaeum's web page: the principal's key kept in this tab only, each command signed here
// with it, and the page following the ledger live. No framework, nothing fetched from elsewhere:
// the browser's own fetch, EventSource and WebCrypto (Ed25519).

const SESSION = "athenaeum.principal"; // {name, seed}: sessionStorage, so it goes with the tab

function principal() {
  try { return JSON.parse(sessionStorage.getItem(SESSION)); } catch { return null; }
}

// An nkey seed is base32 (RFC 4648, unpadded) of two prefix bytes, the 32-byte Ed25519 seed
// and a CRC-16 (XMODEM, little-endian), as the nkeys library writes it.
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32(text) {
  let bits = 0, value = 0;
  const bytes = [];
  for (const character of text) {
    const index = BASE32.indexOf(character);
    if (index < 0) throw new Error("a seed holds only the letters A to Z and the digits 2 to 7");
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return new Uint8Array(bytes);
}

function crc16(bytes) {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
  }
  return crc;
}

function seedBytes(seed) {
  const raw = base32(seed);
  if (!seed.startsWith("SU") || raw.length !== 36) throw new Error("this is not a user's nkey seed (SU…)");
  if (crc16(raw.slice(0, 34)) !== (raw[34] | (raw[35] << 8))) {
    throw new Error("the seed's checksum does not match: a character is wrong");
  }
  return raw.slice(2, 34);
}

// An Ed25519 private key's PKCS #8 form is this fixed prefix and the 32-byte seed.
const PKCS8_ED25519 = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

async function privateKey(seed) {
  if (!window.crypto || !crypto.subtle) {
    throw new Error("this browser signs only on a secure page: open Athenaeum over HTTPS or on localhost");
  }
  const pkcs8 = new Uint8Array([...PKCS8_ED25519, ...seedBytes(seed)]);
  return crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
}

function base64url(bytes) {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
}

// A form's command: its named fields (empty ones left out, so a rule names what is missing),
// checked boxes marked data-many as a list, and each data-list fieldset an item of that list
// when anything but its hidden fields is filled in.
function commandOf(form) {
  const command = {};
  for (const element of form.elements) {
    if (!element.name || element.closest("[data-list]")) continue;
    if ((element.type === "radio" || element.type === "checkbox") && !element.checked) continue;
    if (element.hasAttribute("data-many")) (command[element.name] ??= []).push(element.value);
    else if (element.value.trim() !== "") command[element.name] = element.value;
  }
  for (const group of form.querySelectorAll("[data-list]")) {
    const item = {};
    let given = false;
    for (const element of group.querySelectorAll("[name]")) {
      if (element.value.trim() === "") continue;
      item[element.name] = element.value;
      given ||= element.type !== "hidden";
    }
    if (given) (command[group.dataset.list] ??= []).push(item);
  }
  return command;
}

function say(form, text, refused = false) {
  const outcome = form.querySelector("[data-outcome]");
  outcome.textContent = text;
  outcome.classList.toggle("refusal", refused);
}

function refusal(error) {
  return `Refused: ${error.code}: ${error.message}` + (error.field ? ` (field ${error.field})` : "");
}

async function send(form) {
  const who = principal();
  if (!who || !who.seed) return say(form, "Sign in with your key first: Athenaeum, at the top.", true);
  const path = form.dataset.command;
  say(form, "Signing…");
  // The gateway answers the exact bytes to sign, and the command's JSON to send with them.
  const asked = await fetch(`/ui/signing/${path}`, {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ actor: who.name, command: commandOf(form) }),
  });
  const toSign = await asked.json();
  if (!asked.ok) return say(form, refusal(toSign.error), true);
  const message = Uint8Array.from(atob(toSign.message), (character) => character.charCodeAt(0));
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", await privateKey(who.seed), message));
  const sent = await fetch(`/commands/${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json", "X-Agent-Name": who.name,
      "Athenaeum-Signature": base64url(signature), "Athenaeum-Signed-At": toSign.signed_at,
    },
    body: toSign.command,
  });
  const reply = await sent.json();
  if (!reply.ok) return say(form, refusal(reply.error), true);
  delete form.dataset.dirty;
  const accepted = `Accepted: ${form.dataset.command.replace("/", " ")}, at ledger position ${reply.position}.`;
  say(form, accepted);
  document.querySelector("[data-live-state]").textContent = accepted;
  refresh();
}

// Live: each change of a view reads this page again and swaps its live sections, except a
// form someone is filling in.
let reading = null;
let readAgain = false;

async function refresh() {
  if (reading) {
    readAgain = true;
    return;
  }
  reading = (async () => {
    do {
      readAgain = false;
      const answer = await fetch(location.href, { headers: { Accept: "text/html" } });
      const fresh = new DOMParser().parseFromString(await answer.text(), "text/html");
      for (const section of document.querySelectorAll("[data-live]")) {
        const replacement = fresh.getElementById(section.id);
        if (!replacement || section.querySelector("form[data-dirty]")) continue;
        const hadFocus = section.contains(document.activeElement);
        section.replaceWith(document.importNode(replacement, true));
        if (hadFocus) document.getElementById("main").focus();
      }
    } while (readAgain);
  })();
  try { await reading; } finally { reading = null; }
}

function follow() {
  if (!document.querySelector("[data-live]") || !window.EventSource) return;
  const state = document.querySelector("[data-live-state]");
  const events = new EventSource("/ui/events");
  events.addEventListener("ready", () => {
    document.body.dataset.live = "on";
    if (state.dataset.paused) state.textContent = "";
    delete state.dataset.paused;
    refresh(); // what changed while the stream was down
  });
  events.addEventListener("changed", refresh);
  events.addEventListener("error", () => {
    document.body.dataset.live = "off";
    state.dataset.paused = "yes";
    state.textContent = "Live updates paused; trying again…";
  });
}

async function seedGiven(form) {
  const file = form.querySelector("#seed-file").files[0];
  const text = file ? await file.text() : form.querySelector("#seed").value;
  return text.split(/\s+/).find((word) => word.startsWith("S")) || "";
}

async function signIn(form) {
  const name = form.querySelector("#agent").value.trim();
  const seed = await seedGiven(form);
  if (seed) await privateKey(seed); // refused here, named, rather than at the first decision
  sessionStorage.setItem(SESSION, JSON.stringify({ name, seed }));
  location.assign(`/ui/inbox/${encodeURIComponent(name)}`);
}

function showWho() {
  const who = principal();
  const banner = document.querySelector("[data-who]");
  if (!who) return;
  banner.hidden = false;
  banner.querySelector("[data-who-name]").textContent = `Signed in as ${who.name}` + (who.seed ? ", with your key" : ", reading only");
  banner.querySelector("[data-inbox]").href = `/ui/inbox/${encodeURIComponent(who.name)}`;
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  const action = form.matches("[data-sign-in]") ? signIn : form.matches("form[data-command]") ? send : null;
  if (!action) return;
  event.preventDefault();
  action(form).catch((error) => {
    const outcome = form.querySelector("[data-outcome]");
    outcome.textContent = error.message;
    outcome.classList.add("refusal");
  });
});
document.addEventListener("input", (event) => {
  const form = event.target.closest("form[data-command]");
  if (form) form.dataset.dirty = "yes";
});
document.addEventListener("click", (event) => {
  if (!event.target.matches("[data-sign-out]")) return;
  sessionStorage.removeItem(SESSION);
  location.assign("/ui/");
});
showWho();
follow();
