"""The model: scikit-learn's bundled 8×8 handwritten digits (1,797 images, shipped inside the
package: nothing is downloaded), a support-vector classifier trained when the worker starts on
80 % of them; the other 20 % are held out, to test it and to submit as examples."""
from typing import List, Tuple

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC


def split():  # type: ignore[no-untyped-def]
    """(train images, held-out images, train labels, held-out labels), the same on every call."""
    digits = load_digits()
    return train_test_split(digits.data, digits.target, test_size=0.2, random_state=0)


def train() -> Tuple[SVC, float]:
    """The trained classifier and its accuracy on the held-out images."""
    x_train, x_test, y_train, y_test = split()
    model = SVC(gamma=0.001, probability=True, random_state=0).fit(x_train, y_train)
    return model, float(model.score(x_test, y_test))


def held_out(index: int) -> Tuple[List[int], int]:
    """Held-out image number ``index``: its 64 pixels (0–16, row by row) and its true digit."""
    _, x_test, _, y_test = split()
    return [int(v) for v in x_test[index]], int(y_test[index])
