"""The Hugging Face Trainer: each step's and epoch's energy added to the Trainer's logs, so that
its reporting integrations (TensorBoard, W&B, MLflow) record gpuscope/step_energy_j and
gpuscope/epoch_energy_j beside the loss. Put the callback first: integrations after it see the
figures in the same log entry."""
import torch
from datasets import Dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, Trainer,
                          TrainingArguments)

import gpuscope

name = "distilbert-base-uncased"
tokenizer = AutoTokenizer.from_pretrained(name)
texts = Dataset.from_dict({"text": ["good", "bad"] * 256, "label": [1, 0] * 256})
texts = texts.map(lambda b: tokenizer(b["text"], padding="max_length", max_length=16), batched=True)
model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=2)

energy = gpuscope.callbacks.huggingface()
trainer = Trainer(model=model, train_dataset=texts, callbacks=[energy],
                  args=TrainingArguments("out", num_train_epochs=2, logging_steps=10,
                                         per_device_train_batch_size=32, report_to=[]))
trainer.train()
for entry in energy.history:
    print(f"step {entry['step']}: {entry.get('gpuscope/epoch_energy_j', float('nan')):.1f} J")
print(torch.cuda.is_available() and "measured on the GPU" or "no GPU: time only")
