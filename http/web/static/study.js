// A study's pages (study.html) and the chat page in a study. The steps'
// forms are sent as JSON, as every write to Memento must be; the server
// answers with the page to go to next. On the chat page this adds the
// way on to the questionnaire; study.css hides what would tell the
// participant their arm.

const $ = (sel, root = document) => root.querySelector(sel);

function collect(form) {
  const step = form.dataset.step;
  if (step === 'consent') return { consent: $('#consent', form).checked };
  if (step === 'demographics') {
    const fam = $('input[name="familiarity"]:checked', form);
    return {
      gender: $('#gender', form).value,
      age: Number($('#age', form).value),
      familiarity: fam ? Number(fam.value) : 0,
    };
  }
  const answers = {};
  for (const fs of form.querySelectorAll('fieldset[data-item]')) {
    const v = $('input:checked', fs);
    if (v) answers[fs.dataset.item] = Number(v.value);
  }
  return { answers };
}

async function submit(form) {
  const err = $('#study-error', form);
  const button = $('#study-submit', form);
  err.hidden = true;
  button.disabled = true;
  try {
    const res = await fetch(form.getAttribute('action'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(collect(form)),
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error((data.error && data.error.message) || `The answers could not be saved (HTTP ${res.status}).`);
    location.assign(data.next);
  } catch (e) {
    err.textContent = e.message || 'The answers could not be saved. Is the server still running?';
    err.hidden = false;
    button.disabled = false;
  }
}

function studyChat() {
  const body = document.body;
  const bar = document.createElement('div');
  bar.className = 'study-bar';
  bar.id = 'study-bar';
  const text = document.createElement('span');
  text.textContent = 'Chat with the assistant for as long as you like, then continue to a few questions about it.';
  const link = document.createElement('a');
  link.className = 'button primary';
  link.id = 'to-questionnaire';
  link.href = body.dataset.questionnaire;
  link.textContent = 'Continue to the questions';
  bar.append(text, link);
  // In the top bar, where the memory inspector's button was: the page
  // keeps its height and the way on stays in view.
  $('.topbar').append(bar);
}

const form = $('#study-form');
if (form) {
  form.addEventListener('submit', (e) => { e.preventDefault(); submit(form); });
}
if (document.body.dataset.study) studyChat();
document.body.dataset.studyReady = 'true';
