"""course22 `00-is-it-a-bird-creating-a-model-from-your-own-data.ipynb` (fastai/course22, clean/, cells 12-15): a DataBlock over
a folder per class (`forest`, `bird`), RandomSplitter(valid_pct=0.2, seed=42), parent_label, Resize(192, method='squish'),
`vision_learner(dls, resnet18, metrics=error_rate)`, `learn.fine_tune(3)`, then `learn.predict` on one image.
Changed: the DuckDuckGo image search and downloads are replaced by 24 synthetic images per class (400x300 px, resized to
192 as in the recipe), written offline by synth_data; `pretrained=False` (no weights download)."""
from fastai.vision.all import *
import synth_data

synth_data.seed_everything()
searches = 'forest','bird'
path = synth_data.image_tree('bird_or_not', searches, n_per_class=50, size=(300, 400), splits=(None,))

failed = verify_images(get_image_files(path))
failed.map(Path.unlink)
len(failed)

dls = DataBlock(
    blocks=(ImageBlock, CategoryBlock),
    get_items=get_image_files,
    splitter=RandomSplitter(valid_pct=0.2, seed=42),
    get_y=parent_label,
    item_tfms=[Resize(192, method='squish')]
).dataloaders(path)

learn = vision_learner(dls, resnet18, metrics=error_rate, pretrained=False)
learn.fine_tune(3)

is_bird,_,probs = learn.predict(PILImage.create(get_image_files(path/'bird')[0]))
print(f"This is a: {is_bird}.")
print(f"Probability it's a bird: {probs[0]:.4f}\nProbability it's a forest image: {probs[1]:.4f}")
