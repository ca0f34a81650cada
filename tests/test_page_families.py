"""The new families in the real page, as a person uses them: upload a file of texts, load it with progress,
search, group and find duplicates in it; then the layer measures, every chart drawn, no page error."""

from __future__ import annotations

import pytest

from tests.browsing import Watch, ask, chart_errors, ready
from tests.test_corpus_commands import write_reviews

pytestmark = pytest.mark.browser


@pytest.mark.slow
def test_a_person_uploads_texts_searches_and_groups_them_then_reads_the_layers(serve, browser, tmp_path,
                                                                              stsb_dir):
    data = write_reviews(tmp_path / "my reviews.csv", 150)  # a name with a space: the box quotes it
    _, url = serve(corpus_dir=str(tmp_path / "corpora"), data_dir=str(stsb_dir))
    page = browser.new_page()
    watch = Watch.on(page)
    page.goto(url)
    ready(page)

    page.locator("#corpus-upload input[type=file]").set_input_files(str(data))
    page.wait_for_function("document.querySelector('#command-box textarea').value.startsWith('corpus load')",
                           timeout=60_000)
    box = page.locator("#command-box textarea").input_value()
    assert box == 'corpus load "my reviews.csv"'
    loaded = ask(page, box)
    assert loaded.ok, loaded.inner_text()
    assert "150 texts" in loaded.inner_text() and "review" in loaded.inner_text()
    assert "Read as" not in loaded.inner_text()  # the box's line runs as typed

    hits = ask(page, "search the parcel came late --k 5")
    assert hits.ok and "delivery" in " ".join(hits.cells())
    groups = ask(page, "clusters --k 3")
    assert groups.ok and groups.charts()[0] >= 1 and groups.charts()[0] == groups.charts()[1]
    row = ask(page, "compare #0 | #3")  # rows of the corpus stand in for texts
    assert row.ok and "My parcel arrived" in row.inner_text()
    page.screenshot(path=str(tmp_path / "corpus.png"), full_page=False)

    for line in ("probe --task pos --sentences 24", "cka --sentences 16", "rollout The cat sat on the mat.",
                 "contextuality bank | light --sentences 60", "contextuality --corpus my-reviews --sentences 30"):
        reply = ask(page, line)
        assert reply.ok, f"{line}: {reply.inner_text()[:300]}"
        charts, drawn = reply.charts()
        assert charts >= 1 and drawn == charts, f"{line}: {drawn} of {charts} charts drawn"
    page.screenshot(path=str(tmp_path / "layers.png"), full_page=False)
    assert chart_errors(page) == [] and watch.page_errors == [] and watch.offsite == []
