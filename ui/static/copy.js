// Adds a Copy button after every read-only field marked "copy". The
// dashboard works without it: the fields can be selected and copied.
document.querySelectorAll(".copy").forEach(function (field) {
  var b = document.createElement("button");
  b.type = "button";
  b.className = "copy-button";
  b.textContent = "Copy";
  b.setAttribute("aria-label", "Copy " + (field.labels && field.labels[0] ? field.labels[0].textContent : "value"));
  b.addEventListener("click", function () {
    field.select();
    if (navigator.clipboard) {
      navigator.clipboard.writeText(field.value).then(function () { b.textContent = "Copied"; }, function () {});
    }
  });
  field.insertAdjacentElement("afterend", b);
});
