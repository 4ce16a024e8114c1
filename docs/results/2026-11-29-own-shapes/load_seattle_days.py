"""Load vega_datasets' seattle-weather as a user's own collection with a vectorizer (text2vec-transformers)."""

import weaviate
from vega_datasets import data
from weaviate.classes.config import Configure, DataType, Property

c = weaviate.connect_to_local(port=8080, grpc_port=50051)
name = "SeattleDays"
if c.collections.exists(name):
    c.collections.delete(name)
col = c.collections.create(
    name,
    vector_config=Configure.Vectors.text2vec_transformers(),
    properties=[
        Property(name="date", data_type=DataType.DATE),
        Property(name="precipitation", data_type=DataType.NUMBER),
        Property(name="temp_max", data_type=DataType.NUMBER),
        Property(name="temp_min", data_type=DataType.NUMBER),
        Property(name="wind", data_type=DataType.NUMBER),
        Property(name="weather", data_type=DataType.TEXT),
    ],
)
df = data.seattle_weather()
with col.batch.fixed_size(batch_size=200) as batch:
    for row in df.itertuples():
        batch.add_object(
            properties={
                "date": row.date.strftime("%Y-%m-%dT00:00:00Z"),
                "precipitation": float(row.precipitation),
                "temp_max": float(row.temp_max),
                "temp_min": float(row.temp_min),
                "wind": float(row.wind),
                "weather": row.weather,
            }
        )
print("failed", len(col.batch.failed_objects), "count", col.aggregate.over_all(total_count=True).total_count)
c.close()
