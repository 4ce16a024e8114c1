const selects=[...document.querySelectorAll('#filters select')];
function applyFilters(){let shown=0;
 document.querySelectorAll('details.failure').forEach(d=>{
  const ok=selects.every(s=>!s.value||(d.dataset[s.name]||'').split('|').includes(s.value));
  d.hidden=!ok;if(ok)shown++;});
 document.getElementById('shown').textContent=shown;}
selects.forEach(s=>s.addEventListener('change',applyFilters));
function openAll(open){document.querySelectorAll('details.failure:not([hidden])').forEach(d=>d.open=open);}
